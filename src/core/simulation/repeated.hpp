#pragma once
// Any-time results of a study simulated with several seeds, side by side with the
// reference every HPO paper quotes: random search without early stopping (fifo, random
// sampler) on the same objective and seeds. Seeds are the study's seed, seed + 1, ...
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/simulation/simulation.hpp"

namespace slurmtune::core {

/// The best reported value so far, as a step function: (virtual time, best) at each
/// improvement.
using BestSoFar = std::vector<std::pair<double, double>>;

/// A completed trial of a study of several objectives: when it ended and its losses (the
/// last value of each objective, maximised ones negated).
struct CompletedPoint {
  double time_s = 0;
  std::vector<double> loss;
};

/// Keeps the improvements of the best reported value and, with several objectives, every
/// completed trial's point; passes every event on to `next`.
class BestSoFarRecorder final : public ForwardingObserver {
 public:
  explicit BestSoFarRecorder(const StudySpec& study, SimulationObserver* next = nullptr);
  BestSoFar take() { return std::move(best_); }
  std::vector<CompletedPoint> take_completed() { return std::move(completed_); }

  void reported(TrialId trial, double step, const std::vector<double>& metrics,
                const ReportOutcome& outcome, double time_s) override;
  void trial_ended(TrialId trial, TrialEnd how, double time_s) override;

 private:
  Mode mode_;
  std::vector<StudyObjective> objectives_;  // several: each trial's point is kept
  ObjectiveColumns columns_;
  BestSoFar best_;
  std::unordered_map<TrialId, ObjectiveTracker> reported_;
  std::vector<CompletedPoint> completed_;
};

/// Hypervolume of the Pareto front of completed trials over time, as a step function
/// (time, hypervolume) that rises at each completion that enlarges it; `reference` the
/// point it is measured to (losses).
BestSoFar hypervolume_trace(const std::vector<CompletedPoint>& completed,
                            const std::vector<double>& reference);

/// The best of `trace` at time `t` (nullopt before its first report).
std::optional<double> best_at(const BestSoFar& trace, double t);

/// Quartiles over runs of a quantity some runs may lack (a target never reached, no
/// report yet). A missing value counts as the worst, so the median is missing where
/// more than half the runs lack one. Linear interpolation between order statistics
/// (numpy's default).
struct Quartiles {
  std::optional<double> q25, median, q75;
  std::size_t present = 0;  ///< runs with a value
  std::size_t runs = 0;
};
/// `lower_is_better`: the direction that decides which end "missing" sits at.
Quartiles quartiles(const std::vector<std::optional<double>>& values, bool lower_is_better);

/// One simulated run of a repeated study.
struct SimulatedRun {
  std::uint64_t seed = 0;
  SimulationSummary summary;
  BestSoFar best;
  /// Several objectives: the completed trials' points, and the hypervolume of their
  /// front over time, measured to a reference point common to every run of the study
  /// and its baseline (simulate_repeated).
  std::vector<CompletedPoint> completed;
  BestSoFar hypervolume;
  double compute_s = 0;  ///< busy worker-seconds
};

struct RepeatedSeries {
  std::string label;  ///< "asha, random sampler"
  std::vector<SimulatedRun> runs;
};

struct RepeatedSimulation {
  RepeatedSeries study;     ///< the study as written
  RepeatedSeries baseline;  ///< fifo scheduler, random sampler
  /// Several objectives: where every run's hypervolume is measured to, from the worst
  /// loss of each objective over every completed trial of every run (Optuna's rule:
  /// max(1.1 w, 0.9 w)).
  std::vector<double> reference;
};

/// Several objectives: sets `reference` and every run's hypervolume trace.
void measure_hypervolume(RepeatedSimulation& sim);

/// Label of a study's strategy: "asha (ray), random sampler".
std::string strategy_label(const StudySpec& study);

/// Runs jobs 0 .. count-1, each of which writes only its own result: one after another
/// by default; the command passes a pool of threads (the core starts none itself).
using JobRunner =
    std::function<void(std::size_t count, const std::function<void(std::size_t)>& job)>;
void run_sequentially(std::size_t count, const std::function<void(std::size_t)>& job);

/// Runs `study` and the baseline `repeats` times each (2 x repeats independent jobs).
/// The result does not depend on how `run_jobs` schedules them.
RepeatedSimulation simulate_repeated(const StudySpec& study, const SimulationOptions& options,
                                     std::uint64_t repeats,
                                     const JobRunner& run_jobs = run_sequentially);

/// Times (geometric, `points` of them) spanning every run's first report to the last
/// makespan: where any-time curves are sampled.
std::vector<double> anytime_grid(const RepeatedSimulation& sim, std::size_t points);

}  // namespace slurmtune::core
