#pragma once
// Discrete-event simulation of a whole study in virtual time: the study's sampler and
// scheduler drive `workers` identical workers against an Objective: a synthetic formula
// or recorded learning curves. Nothing sleeps and nothing reads a clock, so a million
// trials take seconds and the same seed gives the same run everywhere.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/schedulers/scheduler.hpp"
#include "core/search/suggester.hpp"
#include "core/simulation/curve_table.hpp"
#include "core/study/study_spec.hpp"

namespace slurmtune::core {

struct SimulationOptions {
  std::size_t workers = 4;
  std::size_t progress_every = 0;  ///< trials between progress callbacks (0: 10 %)
  /// The study runs in Slurm allocations of this many virtual seconds, each followed at
  /// once by the next (the requeued job). `end_margin_s` before each end the running
  /// trials are told to suspend: they checkpoint at their next report; a trial that
  /// does not report before the end is killed and later re-runs its steps since its
  /// last checkpoint (rungs passed, pauses). Trials restart first in the next one.
  std::optional<double> allocation_s;
  double end_margin_s = 300;
  /// Virtual seconds every attempt spends before its first step (process start, data).
  double startup_s = 0;
  /// With allocations: hold work that cannot reach its next rung before the end margin
  /// (core::AllocationClock), as `slurmtune run` does.
  bool allocation_clock = true;
  /// Recorded learning curves to replay instead of the synthetic objective (not owned).
  const CurveTable* curves = nullptr;
  /// With `curves`: a configuration may be drawn again (by default each at most once).
  bool reuse_configurations = false;
  /// With `curves`: the random sampler's draw goes to the configuration nearest to its
  /// point in the space, as a model sampler's suggestion does, instead of uniformly among
  /// the table's configurations (doc/performance.md, "Two ways to draw at random").
  bool nearest_random_draws = false;
  /// Reads a monotonic clock in seconds. When set, what each decision really cost (the
  /// sampler's suggestion, the scheduler's and sampler's handling of a report) is charged
  /// to the virtual clock: the worker waiting for it starts its next step that much later,
  /// as a trial waits for the coordinator. Unset, decisions are free and a seed gives the
  /// same run everywhere; set, the run depends on the machine (core stays clock-free: the
  /// caller supplies the clock).
  std::function<double()> decision_clock;
  /// Every this many events (0: never), the scheduler's and the sampler's state go
  /// through a snapshot (core/state_archive.hpp) into a new scheduler and sampler made
  /// from the study: the run must be the one without it. What tests of the snapshot run.
  std::uint64_t state_round_trip_every = 0;
};

/// Where the compute of a simulation with allocations went, in worker-seconds.
struct AllocationCosts {
  std::uint64_t allocations = 0;  ///< allocations used
  /// Worker-seconds the jobs held their nodes: each job ends when its last trial has
  /// left (suspended, finished or killed), as `slurmtune run` then exits and requeues.
  double charged_s = 0;
  double busy_s = 0;         ///< workers occupied: start-ups and steps
  double startup_s = 0;      ///< of which start-ups (one per attempt)
  double lost_s = 0;         ///< of which steps killed mid-way or re-run after a kill
  std::uint64_t killed = 0;  ///< attempts killed at an allocation's end
};

struct SimulationProgress {
  double time_s = 0;
  std::uint64_t started = 0;
  std::uint64_t running = 0;
  std::uint64_t paused = 0;
  std::uint64_t completed = 0;
  std::uint64_t stopped = 0;
  std::uint64_t reports = 0;
  std::optional<double> best_value;
};

struct SimulationSummary {
  SimulationProgress final;
  std::optional<TrialId> best_trial;
  double best_step = 0;
  Configuration best_config;
  std::optional<double> time_to_target_s;
  double makespan_s = 0;
  double utilisation = 0;                     ///< busy worker-seconds / (workers * makespan)
  std::optional<AllocationCosts> allocation;  ///< with SimulationOptions::allocation_s
  /// Recorded curves: trials that ended where their recorded run ended (stopped by the
  /// recorded study, or the table's last step) before reaching max_t ...
  std::uint64_t ended_as_recorded = 0;
  /// ... of which promotions (resumes) past that end, ended instead of invented.
  std::uint64_t beyond_recorded = 0;
  /// With SimulationOptions::decision_clock: decisions measured and their seconds in all.
  std::uint64_t decisions_charged = 0;
  double decision_s = 0;
};

/// Receives every event of a simulation (the results file writer of later modules, tests).
class SimulationObserver {
 public:
  virtual ~SimulationObserver() = default;
  virtual void trial_started(TrialId, const Configuration&, int /*bracket*/, const SuggestionInfo&,
                             double /*time_s*/) {}
  /// `why`: the scheduler's reason for the resumption, when it gives one.
  virtual void trial_resumed(TrialId, double /*time_s*/, const ResumeReason* /*why*/) {}
  /// PBT: the resumed trial took over `exploit.donor`'s checkpoint with a new configuration.
  virtual void trial_exploited(TrialId, const Exploit& /*exploit*/, double /*time_s*/) {}
  /// A report: `metrics` holds its value of every metric column (StudySpec::metrics;
  /// the judged one first, NaN where absent).
  virtual void reported(TrialId, double /*step*/, const std::vector<double>& /*metrics*/,
                        const ReportOutcome&, double /*time_s*/) {}
  /// A checkpoint the scheduler asked for was saved (right after the report asking).
  virtual void checkpoint_saved(TrialId, double /*step*/, double /*time_s*/) {}
  virtual void trial_ended(TrialId, TrialEnd, double /*time_s*/) {}
  /// No further trial will start (max_trials, budget or threshold reached).
  virtual void admissions_closed(double /*time_s*/) {}
  virtual void progress(const SimulationProgress&) {}
};

/// Passes every event on to `next` (null: nowhere). An observer that acts on some events
/// derives from it, overrides those and calls the base to pass them on.
class ForwardingObserver : public SimulationObserver {
 public:
  explicit ForwardingObserver(SimulationObserver* next) : next_(next) {}
  void trial_started(TrialId t, const Configuration& c, int bracket, const SuggestionInfo& info,
                     double time_s) override {
    if (next_) next_->trial_started(t, c, bracket, info, time_s);
  }
  void trial_resumed(TrialId t, double time_s, const ResumeReason* why) override {
    if (next_) next_->trial_resumed(t, time_s, why);
  }
  void trial_exploited(TrialId t, const Exploit& e, double time_s) override {
    if (next_) next_->trial_exploited(t, e, time_s);
  }
  void reported(TrialId t, double step, const std::vector<double>& metrics, const ReportOutcome& o,
                double time_s) override {
    if (next_) next_->reported(t, step, metrics, o, time_s);
  }
  void checkpoint_saved(TrialId t, double step, double time_s) override {
    if (next_) next_->checkpoint_saved(t, step, time_s);
  }
  void trial_ended(TrialId t, TrialEnd how, double time_s) override {
    if (next_) next_->trial_ended(t, how, time_s);
  }
  void admissions_closed(double time_s) override {
    if (next_) next_->admissions_closed(time_s);
  }
  void progress(const SimulationProgress& p) override {
    if (next_) next_->progress(p);
  }

 private:
  SimulationObserver* next_;
};

/// Runs the study described by `spec`; `observer` may be null.
SimulationSummary simulate_study(const StudySpec& spec, const SimulationOptions& options,
                                 SimulationObserver* observer);

}  // namespace slurmtune::core
