#pragma once
// The model-based suggesters: TPE (Optuna 3.1's, tpe_sampler.hpp) and BOHB
// (bohb_sampler.hpp) over a slurmtune search space. Each keeps the study's history as
// its sampler needs it, updated event by event (no rescans), and maps configurations
// to the sampler's representation and back.
#include <optional>
#include <vector>

#include "core/objectives/objectives.hpp"
#include "core/search/optuna/nsga2_sampler.hpp"
#include "core/search/optuna/tpe_sampler.hpp"
#include "core/search/suggester.hpp"

namespace slurmtune::core {

/// TPE: a parameter's Optuna distribution, by domain kind. Continuous q-domains are
/// sampled continuously and rounded to q afterwards (Optuna's step grid starts at low,
/// Ray's q-grid at 0); constants are not sampled. Grid axes are refused by the study
/// reader before this is reached.
tpe::Distribution tpe_distribution(const Domain& domain);

/// The parameters a model samples (every one but constants), by position; a grid axis
/// is refused, naming `sampler`.
std::vector<std::size_t> sampled_parameters(const SearchSpace& space, std::string_view sampler);

/// A configuration from a model's numbers for the `sampled` parameters (`value_of` maps
/// each back to its domain); the others take their constant value.
Configuration configuration_of(const SearchSpace& space, const std::vector<std::size_t>& sampled,
                               const std::vector<double>& numbers,
                               ParamValue (*value_of)(const Domain&, double));

/// Every trial's last reported value of each objective and constraint metric, from the
/// metric rows reported_metrics() passes (SamplerSpec::metric_columns), for the samplers
/// of several objectives and constraints.
class ReportedObjectives {
 public:
  explicit ReportedObjectives(const SamplerSpec& spec);
  void update(TrialId trial, const std::vector<double>& row);
  /// The trial's values so far (none reported: an empty tracker).
  const ObjectiveTracker& of(TrialId trial);
  const std::vector<StudyObjective>& objectives() const { return objectives_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  /// Several objectives or any constraint: reports matter beyond the judged value.
  bool needed() const { return objectives_.size() > 1 || !constraints_.empty(); }

  template <class Archive>
  void serialize(Archive& archive) {
    archive(trials_);
  }

 private:
  std::vector<StudyObjective> objectives_;
  std::vector<Constraint> constraints_;
  ObjectiveColumns columns_;
  std::vector<ObjectiveTracker> trials_;  // by trial id
};

class TpeSuggester final : public Suggester {
 public:
  /// `spec.tpe` with the study's objectives and constraints (Optuna's MOTPE and
  /// constraints_func).
  TpeSuggester(const SearchSpace& space, const SamplerSpec& spec, bool maximize,
               std::uint32_t seed);
  Suggestion suggest(TrialId trial) override;
  /// Optuna's trial with fixed parameters: they are not drawn (with multivariate, the
  /// joint draw happens and the fixed values take the place of theirs).
  Suggestion suggest_fixed(TrialId trial, const PartialConfiguration& fixed) override;
  void started(TrialId trial, const Configuration& config) override;
  void reported_metrics(TrialId trial, double step, const std::vector<double>& row) override;
  void reported(TrialId trial, double step, double value, const ReportOutcome& outcome) override;
  void resumed(TrialId trial) override;
  void ended(TrialId trial, TrialEnd how) override;
  void restore(const SamplerPosition& position) override;
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;

 private:
  tpe::TrialRecord& record(TrialId trial);
  Suggestion suggest_with(TrialId trial, const PartialConfiguration* fixed);
  SamplerPosition position() const;

  SearchSpace space_;
  std::vector<std::size_t> sampled_;  // parameters TPE samples (constants are not)
  tpe::TpeSampler sampler_;
  std::vector<tpe::TrialRecord> history_;  // by trial id
  ReportedObjectives reported_;
  bool group_ = false;
  std::optional<TrialId> suggested_;  // the trial suggest() suggested last
};

/// NSGA-II over several objectives: a trial's objective values are the last ones it
/// reported of each objective metric (a completed trial lacking one fails, as an
/// Optuna objective returning None does); its constraint values come from the last
/// reported value of each constraint's metric (none when one was never reported).
class Nsga2Suggester final : public Suggester {
 public:
  Nsga2Suggester(const SearchSpace& space, const SamplerSpec& spec, std::uint32_t seed);
  Suggestion suggest(TrialId trial) override;
  Suggestion suggest_fixed(TrialId trial, const PartialConfiguration& fixed) override;
  void started(TrialId trial, const Configuration& config) override;
  void reported_metrics(TrialId trial, double step, const std::vector<double>& row) override;
  void ended(TrialId trial, TrialEnd how) override;
  void restore(const SamplerPosition& position) override;
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;

 private:
  Suggestion suggest_with(TrialId trial, const PartialConfiguration* fixed);
  nsga2::Individual& record(TrialId trial);

  SearchSpace space_;
  std::vector<std::size_t> sampled_;
  nsga2::Nsga2Sampler sampler_;
  std::vector<nsga2::Individual> history_;  // by trial id
  ReportedObjectives reported_;
  std::optional<TrialId> suggested_;  // the trial suggest() suggested last
};

}  // namespace slurmtune::core
