// The one place that looks at the launch mode: [trial] mode = "mpi" runs trial groups,
// anything else a process per attempt, on worker steps with [resources] launch = "worker".
#include "runtime/backends/launch_backend.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "core/error.hpp"
#include "runtime/backends/group_backend.hpp"
#include "runtime/backends/process_backend.hpp"
#include "runtime/launch/slurm_limits.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {
namespace {

bool trial_groups(const core::StudySpec& spec) {
  return spec.trial.mode == core::TrialSpec::Mode::Mpi;
}

}  // namespace

// A command template whose program is missing would fail every trial; say so at once.
void check_launchable(const core::StudySpec& spec) {
  if (spec.trial.command.empty() && !trial_groups(spec))
    throw InputError(spec.path +
                     ": [trial] command is required by 'slurmtune run' (the "
                     "program each trial runs, e.g. [\"python3\", \"train.py\", \"--lr={lr}\"])");
  const std::string& program =
      trial_groups(spec) ? spec.trial.program.front() : spec.trial.command.front();
  if (program.find('{') != std::string::npos || program.find('/') != std::string::npos) return;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (::access((std::filesystem::path(dir.empty() ? "." : dir) / program).c_str(), X_OK) == 0)
      return;
  throw InputError(spec.path + ": [trial] command: program '" + program +
                   "' is not on PATH; give its full path or load its module first");
}

// A step per trial: Slurm's MaxStepCount per job may end the study before max_trials.
// Trials a worker can start (one rank, no GPUs to hand out) then start on a worker per
// node instead, which needs one step for all of them; others are warned. Trials of
// several ranks are steps even on worker launch: they are warned as well.
bool uses_worker_steps(const core::StudySpec& spec, const Launcher& launcher,
                       const std::string& trials_dir) {
  if (trial_groups(spec)) return false;
  const auto& resources = spec.resources;
  const bool asked = resources.launch == core::ResourceSpec::Launch::Worker;
  if ((asked && resources.ranks() == 1) || launcher.single_host()) return asked;
  const auto max_steps = cluster_max_step_count(trials_dir + "/scontrol-config.out");
  const std::string warning = max_steps ? step_count_warning(spec.max_trials, *max_steps) : "";
  if (warning.empty()) return asked;
  if (resources.ranks() == 1 && resources.gpus_per_task == 0) {
    log_line("max_trials = " + std::to_string(spec.max_trials) +
             " needs more job steps than the cluster's MaxStepCount (" +
             std::to_string(*max_steps) +
             ") allows one job: the trials start on a worker per node instead, as with "
             "[resources] launch = \"worker\"");
    return true;
  }
  log_line("warning: " + warning);
  return asked;
}

bool workers_start_every_trial(const core::StudySpec& spec, const Launcher& launcher,
                               bool worker_steps) {
  return !trial_groups(spec) && worker_steps && spec.resources.ranks() == 1 &&
         !launcher.single_host();
}

std::unique_ptr<LaunchBackend> make_launch_backend(const BackendContext& context,
                                                   bool worker_steps) {
  if (trial_groups(context.spec)) return std::make_unique<GroupBackend>(context);
  return std::make_unique<ProcessBackend>(context, worker_steps);
}

void schedule_stop(TrialTable& trials, ActiveTrial& t, std::chrono::steady_clock::time_point now,
                   double grace_s) {
  const auto at = now + steady_seconds(grace_s);
  if (t.terminate_at && *t.terminate_at <= at) return;
  t.terminate_at = at;
  trials.wake_at(t.trial, at);
}

}  // namespace slurmtune::runtime
