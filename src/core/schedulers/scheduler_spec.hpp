#pragma once
// The resolved `[scheduler]` table of a study file and the factory that builds the
// scheduler it describes.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/objectives/objectives.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/space/search_space.hpp"

namespace slurmtune::core {

enum class SchedulerType { Fifo, Asha, AshaPromotion, Hyperband, Median, Pbt, FreezeThaw };
std::string_view scheduler_keyword(SchedulerType type);
std::optional<SchedulerType> scheduler_type_from_keyword(std::string_view word);
std::vector<std::string_view> scheduler_keywords();  ///< the study file's words, listed in order

/// What freeze_thaw divides a job's expected improvement by: nothing, the resource it
/// trains, or the seconds that resource is expected to take (the model's step costs).
enum class JobCost { None, Resource, Seconds };
std::string_view job_cost_keyword(JobCost cost);
std::optional<JobCost> job_cost_from_keyword(std::string_view word);
std::vector<std::string_view> job_cost_keywords();

/// asha_promotion's trust_check_waiver: what keeps the trust of a trusted trial that ranks
/// low in a passed rung (asha_promotion_scheduler.hpp).
enum class TrustWaiver { None, Gain, Overtake, Lesson };
std::string_view trust_waiver_keyword(TrustWaiver waiver);
std::optional<TrustWaiver> trust_waiver_from_keyword(std::string_view word);
std::vector<std::string_view> trust_waiver_keywords();

/// Whose published decision rules a scheduler reproduces.
enum class Semantics { Ray, Optuna };

/// asha_promotion's trust_check ends a trusted trial's trust in a passed rung's worse half
/// unless the study file's trust_check_above says otherwise.
inline constexpr double kDefaultTrustCheckAbove = 0.5;

/// A hyperparameter PBT changes when it explores (an entry of Ray's
/// hyperparam_mutations): stepped through `values` when given, else resampled from or
/// scaled within its [search] domain.
struct PbtMutation {
  std::size_t param = 0;  ///< index in the search space
  std::string name;       ///< its name there
  Domain domain;          ///< its [search] domain
  std::vector<ParamValue> values;
};

/// Population Based Training (Ray Tune's PopulationBasedTraining).
struct PbtSpec {
  double perturbation_interval = 0;  ///< resource between two perturbations of a trial
  double burn_in_period = 0;         ///< no perturbation before this resource
  double quantile_fraction = 0.25;
  double resample_probability = 0.25;
  std::vector<double> perturbation_factors{1.2, 0.8};
  bool synch = false;
  std::vector<PbtMutation> mutations;
  /// The study's max_trials (set with it): trials beyond the started ones still to come.
  /// 0: unknown, until admissions close.
  std::uint64_t population = 0;
};

struct SchedulerSpec {
  SchedulerType type = SchedulerType::Fifo;
  Semantics semantics = Semantics::Ray;
  std::string resource = "step";  ///< name of the resource attribute (Ray's time_attr)
  double max_t = 100;             ///< resource at which a trial has run its course
  double grace_period = 1;        ///< first milestone / minimum resource
  double reduction_factor = 4;    ///< eta
  int brackets = 1;
  bool stop_last_trials = true;
  std::vector<double> milestones;  ///< explicit rungs (asha); empty = geometric
  /// asha_promotion: learning-curve prediction stops predicted losers and lets a
  /// predicted winner run on without pausing (asha_promotion_scheduler.hpp).
  bool predict = false;
  /// asha_promotion: a trial that reports the best value yet seen at a rung holding fewer
  /// than reduction_factor trials (where nothing can be promoted yet) runs on instead of
  /// pausing, as Optuna's SuccessiveHalving lets the best so far continue.
  bool eager_promotion = false;
  /// asha_promotion: the first this many trials (a prior's earlier best started as they
  /// were, `[[enqueue]]` entries) run to max_t without pausing; they still enter the rungs'
  /// rankings. The study said what they are, so a slow start does not park them. Not
  /// given: with a MOBSTER prior, its prior_exact (set by the study file reader), else 0.
  std::optional<std::int64_t> trusted_trials;
  bool trusted_trials_named = false;  ///< the file gives trusted_trials (resume keeps a default)
  /// asha_promotion: a trusted trial keeps its trust only while it is not in the worse
  /// half of a rung it has passed (judged once the rung holds kTrustCheckPeers others);
  /// then it is judged at the rungs as any trial is. A prior's earlier best that starts
  /// slowly keeps it; one that is bad on this task gives its worker back.
  bool trust_check = false;
  bool trust_check_named = false;  ///< the file gives trust_check (resume keeps a default)
  /// trust_check: the share of a passed rung's other results that must rank above a
  /// trusted trial to end its trust; the default, 0.5, ends it in the rung's worse half.
  double trust_check_above = kDefaultTrustCheckAbove;
  /// trust_check: what keeps the trust of a trial that ranks low in a passed rung: its gain
  /// into the next rung beating the median gain of that rung's others, its having
  /// overtaken a quarter of them, or its having ranked as low in the earlier study at the
  /// same resource ("lesson"), so a late bloomer keeps it (asha_promotion_scheduler.hpp).
  TrustWaiver trust_check_waiver = TrustWaiver::None;
  bool trust_check_waiver_named = false;  ///< the file gives it (resume keeps a default)
  /// trust_check_waiver: the lowest rung whose low rank the waiver may excuse; a low rank in
  /// a rung below it ends the trust as without a waiver. 0: every rung, the first rung's
  /// verdict waiting for the second.
  std::int64_t trust_check_waiver_from_rung = 0;
  bool trust_check_waiver_from_rung_named = false;  ///< the file gives it
  /// freeze_thaw: the share of jobs chosen by asha_promotion's rule instead of the model
  /// (so the race cannot starve), and what a job's expected improvement is divided by
  /// (freeze_thaw_scheduler.hpp).
  double promotion_mix = 0.25;
  JobCost job_cost = JobCost::Resource;

  // Optuna semantics.
  std::optional<std::int64_t> min_resource;  ///< nullopt = "auto"
  std::optional<std::int64_t> max_resource;  ///< hyperband; nullopt = "auto"
  std::int64_t min_early_stopping_rate = 0;
  std::int64_t bootstrap_count = 0;

  // Median stopping rule.
  std::int64_t min_samples_required = 3;

  PbtSpec pbt;

  /// Several objectives (set by the study reader): `asha` is then MO-ASHA
  /// (moasha_scheduler.hpp), which ranks a rung by every objective; metric_columns are
  /// a report's metric row's columns (StudySpec::metrics).
  std::vector<StudyObjective> objectives;
  std::vector<std::string> metric_columns;
};

/// Rungs of a geometric schedule: grace * rf^k for k >= skip while <= max_t.
std::vector<double> geometric_milestones(double grace, double rf, double max_t, int skip = 0);

}  // namespace slurmtune::core
