#pragma once
// What a study optimizes when it is more than one metric: its objectives (`[study]
// metric = ["val_loss", "latency_ms"]`, `mode = ["min", "min"]`) and constraints on
// reported metrics (`constraints = ["mem_gb <= 40"]`). A trial's value of each is the
// last value it reported (reports may carry a subset of the metrics); a constraint's
// value follows Optuna's constraints_func convention: <= 0 is feasible.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/objectives/mode.hpp"

namespace slurmtune::core {

struct StudyObjective {
  std::string metric;
  Mode mode = Mode::Min;
};

struct Constraint {
  std::string metric;
  enum class Bound { AtMost, AtLeast };  ///< metric <= limit, metric >= limit
  Bound bound = Bound::AtMost;
  double limit = 0;

  /// Optuna's constraint value: metric - limit for <=, limit - metric for >=.
  double value(double metric_value) const;
  /// "mem_gb <= 40", as it reads back.
  std::string text() const;
};

/// Reads "metric <= number" or "metric >= number" (spaces optional; the operator is the
/// last "<=" or ">=", so a metric name may hold either); nullopt with the reason in
/// `why` otherwise.
std::optional<Constraint> parse_constraint(std::string_view text, std::string& why);

/// Where a report's row of metric values (StudySpec::metrics order) holds each objective
/// and each constraint's metric.
struct ObjectiveColumns {
  ObjectiveColumns() = default;
  /// Throws UsageError for a metric that is not one of `metric_columns`.
  ObjectiveColumns(const std::vector<std::string>& metric_columns,
                   const std::vector<StudyObjective>& objectives,
                   const std::vector<Constraint>& constraints);
  std::vector<std::size_t> objectives, constraints;
};

/// A trial's standing on several objectives: the last value of each objective and of
/// each constraint's metric (NaN until one is reported). Fed a report's row of metric
/// values, in the columns `objective_columns` and `constraint_columns` name.
class ObjectiveTracker {
 public:
  ObjectiveTracker() = default;
  ObjectiveTracker(std::size_t objectives, std::size_t constraints)
      : objectives_(objectives, nan()), constraint_metrics_(constraints, nan()) {}

  /// Takes the non-NaN values of `row` (objectives first, then constraint metrics).
  void update(const std::vector<double>& objective_values,
              const std::vector<double>& constraint_metric_values);
  /// The same from a report's whole row.
  void update(const std::vector<double>& row, const ObjectiveColumns& columns);
  /// Every objective has a value.
  bool complete() const;
  const std::vector<double>& objectives() const { return objectives_; }
  const std::vector<double>& constraint_metrics() const { return constraint_metrics_; }
  template <class Archive>  // a snapshot (core/state_archive.hpp)
  void serialize(Archive& archive) {
    archive(objectives_, constraint_metrics_);
  }
  /// The constraints' values, or nullopt where a constraint's metric was never reported.
  std::optional<std::vector<double>> constraint_values(const std::vector<Constraint>& c) const;

 private:
  static double nan();
  std::vector<double> objectives_, constraint_metrics_;
};

}  // namespace slurmtune::core
