#pragma once
// The resolved study: everything a study file says, with defaults filled in. Parsing
// and validation live in src/config; this is the plain value every module passes around.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/objectives/objectives.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/schedulers/scheduler_spec.hpp"
#include "core/search/sampler_spec.hpp"
#include "core/space/search_space.hpp"

namespace slurmtune::core {

/// `[trial]`: how a trial runs (used by `slurmtune run`).
struct TrialSpec {
  enum class Mode {
    Command,  ///< every trial is its own process (or job step): `command`
    Mpi,      ///< one MPI step runs `program`, split into per-trial groups (run_trials)
  };
  Mode mode = Mode::Command;
  /// Mpi: one step over the allocation split into groups, or one step per group
  enum class Layout { Split, Steps };
  Layout layout = Layout::Split;
  std::vector<std::string> command;  ///< argv template with {param} placeholders
  std::vector<std::string> program;  ///< Mpi: the MPI program's argv (no placeholders)
  std::int64_t max_failures = 0;     ///< retries of a failed trial
  /// Wall-clock seconds one attempt may run; past it the attempt fails (and is retried).
  std::optional<double> time_limit_s;
  /// Seconds a running attempt may go without a report, heartbeat or checkpoint (counted
  /// from its launch, then from the last one); past it the attempt fails as hung.
  std::optional<double> report_timeout_s;
};

/// `[checkpoints]`: which checkpoint files slurmtune removes as a study goes on (none by
/// default). Applied by `slurmtune run` (core/study/checkpoint_retention.hpp).
struct CheckpointPolicy {
  /// A trial's newest this many checkpoints (distinct paths) are kept; an older one is
  /// removed when a newer one is saved. nullopt: all.
  std::optional<std::int64_t> keep_per_trial;
  /// Of the trials that ended for good (completed, stopped by the scheduler, failed), the
  /// this many best by the study's metric keep their checkpoints; the others' are
  /// removed as they end or fall out of the best. nullopt: all.
  std::optional<std::int64_t> keep_ended;
  /// A folder of the user's (scratch, a burst buffer) for the trials' checkpoints, as
  /// written (relative: to the study file's folder); each trial gets its trial-<id> in
  /// it. Empty: the trials' own folders in STUDY.trials/.
  std::string folder;
  /// `folder` is on each node's own disk (NVMe, a RAM disk): the node agents make, check
  /// and remove the checkpoints there, and a trial resumes on the node that holds its
  /// checkpoint. "{node}" in `folder` stands for the node's name.
  bool node_local = false;
  bool removes() const { return keep_per_trial || keep_ended; }
};

/// `[resources]`: what one trial gets and how many run at once.
struct ResourceSpec {
  std::int64_t nodes = 1;
  std::int64_t ntasks_per_node = 1;
  std::int64_t cpus_per_task = 1;
  std::int64_t gpus_per_task = 0;
  std::optional<std::int64_t> max_concurrent;  ///< nullopt: as many as fit
  /// [trial] mode = "mpi": ranks per trial group (nullopt: `nodes` whole nodes per trial)
  std::optional<std::int64_t> ranks_per_trial;
  /// Slurm's --gpu-bind for trial steps ("closest", "single:1", "map_gpu:0,1", ...).
  std::optional<std::string> gpu_bind;
  /// How command trials start under Slurm: a job step each, or as children of one
  /// long-lived worker step per node.
  enum class Launch { Step, Worker };
  Launch launch = Launch::Step;

  /// Ranks of one trial (command trials): nodes x ntasks_per_node.
  std::int64_t ranks() const { return nodes * ntasks_per_node; }
};

/// `[simulate]`: the objective `slurmtune simulate` evaluates.
struct SimulationSpec {
  /// Recorded learning curves (a CSV table or a results file) instead of the synthetic
  /// objective; a relative path is relative to the study file's folder.
  std::optional<std::string> curves;
  std::string objective = "bowl";  ///< bowl | rastrigin
  double step_time_s = 1.0;        ///< mean virtual seconds per step
  double noise = 0.01;             ///< standard deviation of per-report noise
  std::optional<double> target;    ///< value whose first reach is timed
};

struct StudySpec {
  std::string path;  ///< where the study file was read from ("<string>" if not a file)
  std::string text;  ///< the study file as written (kept verbatim in the results file)
  std::string name;
  std::string metric;                ///< the metric schedulers judge: the first objective
  std::vector<std::string> metrics;  ///< every metric column (the objectives first)
  Mode mode = Mode::Min;             ///< the first objective's
  /// What the study optimizes: one objective (metric, mode), or several, whose result
  /// is a Pareto front.
  std::vector<StudyObjective> objectives;
  std::vector<Constraint> constraints;  ///< on reported metrics (feasible trials first)
  bool multi_objective() const { return objectives.size() > 1; }
  std::uint64_t seed = 0;
  std::uint64_t max_trials = 100;
  std::optional<double> time_budget_s;
  std::optional<double> metric_threshold;  ///< stop the study once a trial reaches it
  SamplerSpec sampler;                     ///< `[study] sampler` and its `[sampler]` options
  SearchSpace space;
  SchedulerSpec scheduler;
  TrialSpec trial;
  CheckpointPolicy checkpoints;
  ResourceSpec resources;
  SimulationSpec simulate;
};

}  // namespace slurmtune::core
