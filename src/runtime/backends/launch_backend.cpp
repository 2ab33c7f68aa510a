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

bool workers_start_every_trial(const core::StudySpec& spec, const Launcher& launcher) {
  return !trial_groups(spec) && spec.resources.launch == core::ResourceSpec::Launch::Worker &&
         spec.resources.ranks() == 1 && !launcher.single_host();
}

std::unique_ptr<LaunchBackend> make_launch_backend(const BackendContext& context) {
  if (trial_groups(context.spec)) return std::make_unique<GroupBackend>(context);
  return std::make_unique<ProcessBackend>(
      context, context.spec.resources.launch == core::ResourceSpec::Launch::Worker);
}

void schedule_stop(TrialTable& trials, ActiveTrial& t, std::chrono::steady_clock::time_point now,
                   double grace_s) {
  const auto at = now + steady_seconds(grace_s);
  if (t.terminate_at && *t.terminate_at <= at) return;
  t.terminate_at = at;
  trials.wake_at(t.trial, at);
}

}  // namespace slurmtune::runtime
