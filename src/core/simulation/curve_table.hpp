#pragma once
// Recorded learning curves: for each configuration of a finite set, the judged metric
// after each step and the seconds each step took, possibly several times (training
// seeds). Built row by row from a CSV table (curve_csv.hpp) or a past results file
// (store/recorded_curves.hpp), validated once, then read by the simulator at memory
// speed: the points of all curves live in one flat array, each curve's contiguous.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/space/search_space.hpp"

namespace slurmtune::core {

/// One recorded report.
struct CurvePoint {
  double step = 0;     ///< the resource value (epoch, iteration)
  double value = 0;    ///< the judged metric (NaN: the run diverged)
  double seconds = 0;  ///< how long this step took
  /// Several objectives: the other objectives' values at this report, in order.
  std::vector<double> others;
};

class CurveTable {
 public:
  struct Curve {
    std::size_t config = 0;              ///< index into configurations()
    std::uint32_t first = 0;             ///< its first point in the flat array
    std::uint32_t length = 0;            ///< number of points (at least one)
    TrialEnd end = TrialEnd::Completed;  ///< how the recorded run ended after its last point
  };

  const std::string& source() const { return source_; }
  const std::vector<Configuration>& configurations() const { return configs_; }
  /// The curves of configuration `config` (its repeats, in the order of their seed or
  /// repeat labels) are the ids first_curve(config) + [0, repeats(config)).
  std::uint32_t first_curve(std::size_t config) const { return first_curve_[config]; }
  std::uint32_t repeats(std::size_t config) const {
    return first_curve_[config + 1] - first_curve_[config];
  }
  const Curve& curve(std::uint32_t id) const { return curves_[id]; }
  std::size_t curve_count() const { return curves_.size(); }
  std::size_t point_count() const { return points_.size(); }
  const CurvePoint& point(std::uint32_t curve, std::uint32_t index) const {
    return points_[curves_[curve].first + index];
  }
  /// Recorded configurations left out because the study's search space does not admit
  /// them (a narrower what-if), and one example of why.
  std::size_t excluded() const { return excluded_; }
  const std::string& excluded_example() const { return excluded_example_; }
  /// Best value of any recorded point (the table's optimum for regret), NaN if none.
  double best_value(Mode mode) const;

 private:
  friend class CurveTableBuilder;
  std::string source_;
  std::vector<Configuration> configs_;
  std::vector<std::uint32_t> first_curve_;  // per configuration, plus the end
  std::vector<Curve> curves_;
  std::vector<CurvePoint> points_;
  std::size_t excluded_ = 0;
  std::string excluded_example_;
};

/// Collects rows in any order and checks them into a CurveTable. Every error names the
/// source and the row (`where`) it came from.
class CurveTableBuilder {
 public:
  /// How the rows give step durations.
  enum class Durations {
    PerStep,     ///< each row's duration is its own step's (step_seconds)
    Cumulative,  ///< each row's duration is the time since the curve began (elapsed_seconds)
  };

  CurveTableBuilder(std::string source, const SearchSpace& space, Durations durations);

  /// One report of configuration `config` (values in the search space's order) in run
  /// `repeat`. `where` locates the row for error messages ("row 17"). `end`, when given,
  /// is how the run ended; the one on its last step's row counts.
  void add(const std::string& where, Configuration config, const std::string& repeat, double step,
           double value, double duration, std::optional<TrialEnd> end = std::nullopt);
  /// How the run (`config`, `repeat`) ended after its last row (default: completed).
  void set_end(const Configuration& config, const std::string& repeat, TrialEnd end);
  /// Validates and returns the table: curves sorted by step, durations per step;
  /// configurations outside the search space counted and left out.
  CurveTable finish();

 private:
  struct Row {
    double step, value, duration;
    std::string where;
    std::optional<TrialEnd> end;
  };
  struct Run {
    std::vector<Row> rows;
    TrialEnd end = TrialEnd::Completed;
  };
  using RunKey = std::pair<std::size_t, std::string>;  // configuration index, repeat label
  std::size_t config_index(Configuration config);
  void add_curve(CurveTable& table, std::size_t kept_config, const RunKey& key, Run& run) const;

  std::string source_;
  const SearchSpace* space_;
  Durations durations_;
  std::map<std::vector<ParamValue>, std::size_t> config_ids_;
  std::vector<Configuration> configs_;
  std::map<RunKey, Run> runs_;
};

}  // namespace slurmtune::core
