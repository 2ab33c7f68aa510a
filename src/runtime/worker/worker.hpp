#pragma once
// `slurmtune worker`: the long-lived process of a worker step ([resources] launch =
// "worker", or a job that joined the study with `slurmtune join`). It connects to the
// coordinator over the authenticated control plane and starts trial commands as its own
// children on the coordinator's instruction (LAUNCH), signals them (SIGNAL) and says how
// each ended (EXITED). One `srun` step per node then serves every trial on that node:
// no step launch per trial, and no Slurm MaxStepCount to run out of.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/worker/relay_tree.hpp"

namespace slurmtune::runtime {

struct WorkerOptions {
  std::string address;     ///< the coordinator, HOST:PORT (SLURMTUNE_ADDR)
  std::string token_file;  ///< SLURMTUNE_TOKEN_FILE
  std::string node;        ///< the node this worker serves, as the coordinator names it
  /// A joined job's worker (`slurmtune join`): the results file. The address and token are
  /// read from next to it at every connect, so the worker follows a requeued coordinator.
  std::string study;
  std::string allocation;            ///< the joined job's id
  std::int64_t cpus = 0, gpus = 0;   ///< what its node holds for trials
  double reconnect_timeout_s = 600;  ///< joined: how long to look for a coordinator
  double retry_interval_s = 2;       ///< joined: between two looks
  std::string scratch;               ///< joined: a file for squeue's answer
  RelayPlace relay;  ///< the study's own workers: its place in the relay tier, if any
  double relay_wait_s = kRelayWait.count();  ///< how long to wait for the relay's address
  /// Trials of several ranks ([resources] launch = "worker" with ranks > 1): the folder
  /// where each agent publishes its local address under its node's name, for the ranks
  /// the coordinator starts as their own steps (SLURMTUNE_AGENTS); empty: none.
  std::string agents_folder;
};

/// Serves until the coordinator closes the connection (0) or is lost (1). Children
/// still running then are killed with their process groups. SIGTERM (the step
/// cancelled, the job's end) is passed on to every child's group; the coordinator
/// decides what follows. A joined worker also tells the coordinator that its job ends
/// (SIGUSR1, the time-limit warning, or SIGTERM), and after losing a coordinator that did
/// not say the study is over it looks for the next one for `reconnect_timeout_s`.
int run_worker(const WorkerOptions& options);

}  // namespace slurmtune::runtime
