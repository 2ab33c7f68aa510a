#include "runtime/worker/join.hpp"

#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "runtime/control/event_loop.hpp"
#include "runtime/launch/child_process.hpp"
#include "runtime/launch/launcher.hpp"
#include "runtime/log.hpp"
#include "runtime/study_paths.hpp"
#include "runtime/this_process.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;
namespace {

SlurmAllocation this_allocation() {
  auto allocation = slurm_allocation(environment_map());
  if (!allocation)
    throw InputError(
        "slurmtune join runs inside a Slurm job (sbatch sbatch/join-hpo.sbatch): "
        "SLURM_JOB_ID and SLURM_JOB_NODELIST are not set");
  return *allocation;
}

void check_study_path(const std::string& study) {
  const fs::path path = fs::absolute(study);
  if (!fs::is_directory(path.parent_path()))
    throw InputError(study + ": no such folder (" + path.parent_path().string() + ")");
  if (!fs::exists(path) && !fs::exists(trials_dir_of(study)))
    log_line("join: " + study +
             " does not exist yet; the workers wait up to their reconnect "
             "timeout for its coordinator to start");
}

// The workers of nodes of one shape: each names its node by SLURMD_NODENAME.
std::vector<std::string> worker_program(const JoinOptions& options, const std::string& job,
                                        const core::NodeCapacity& shape) {
  return {self_program(),
          "worker",
          "--study",
          fs::absolute(options.study).string(),
          "--allocation",
          job,
          "--cpus",
          std::to_string(shape.cpus),
          "--gpus",
          std::to_string(shape.gpus),
          "--reconnect-timeout",
          core::format_double(options.reconnect_timeout_s)};
}

}  // namespace

int run_join(const JoinOptions& options) {
  if (!(options.reconnect_timeout_s > 0))
    throw InputError("--reconnect-timeout must be > 0 seconds");
  check_study_path(options.study);
  const SlurmAllocation allocation = this_allocation();
  const protocol::UniqueFd signals = make_signal_fd({SIGCHLD, SIGTERM, SIGINT, SIGUSR1});
  // One srun for all nodes of a shape, a task per node.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::string>> shapes;
  for (const auto& node : allocation.nodes)
    shapes[{node.cpus, node.gpus}].push_back(node.name);
  std::vector<ChildProcess> workers;
  for (const auto& [shape, names] : shapes) {
    SpawnRequest request;
    request.argv =
        worker_step_argv(options.srun, names, shape.first, shape.second, options.srun_args,
                         worker_program(options, allocation.job_id,
                                        core::NodeCapacity{"", shape.first, shape.second}));
    workers.push_back(ChildProcess::spawn(request));
  }
  log_line("join: job " + allocation.job_id + " adds " + std::to_string(allocation.nodes.size()) +
           " node(s) to " + options.study + " (a worker on each, " +
           std::to_string(workers.size()) + " srun step(s))");
  EventLoop loop;
  loop.add(signals.get(), EPOLLIN, [&](std::uint32_t) {
    signalfd_siginfo info{};
    while (::read(signals.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      const int signal = static_cast<int>(info.ssi_signo);
      if (signal == SIGCHLD) continue;
      log_line(std::string("join: SIG") + sigabbrev_np(signal) + ": passed to the workers");
      for (auto& worker : workers)
        if (!worker.poll()) worker.signal_group(signal == SIGINT ? SIGTERM : signal);
    }
  });
  // Each worker's own bounds (its reconnect timeout, the job's time limit) end this wait.
  const auto running = [&] {
    bool any = false;
    for (auto& worker : workers)
      any = !worker.poll() || any;
    return any;
  };
  while (running())
    loop.run_once(500);
  int failed = 0;
  for (auto& worker : workers)
    failed += worker.poll()->success() ? 0 : 1;
  log_line("join: job " + allocation.job_id + " leaves the study" +
           (failed ? " (" + std::to_string(failed) + " worker step(s) failed)" : ""));
  return failed ? 1 : 0;
}

}  // namespace slurmtune::runtime
