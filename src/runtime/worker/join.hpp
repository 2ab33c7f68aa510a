#pragma once
// `slurmtune join STUDY`: run inside another Slurm job, it adds that job's nodes to a
// running study. One worker step per node (`slurmtune worker --study ...`) finds the
// coordinator through the address published next to the results file, proves the token
// both ways and serves trials until the study is over, its job ends, or no coordinator
// comes back within the reconnect timeout (a requeued coordinator is followed).
#include <string>
#include <vector>

namespace slurmtune::runtime {

struct JoinOptions {
  std::string study;  ///< the results file (HDF5); its .trials folder holds address and token
  std::string srun = "srun";
  std::vector<std::string> srun_args;  ///< extra arguments for every worker step
  double reconnect_timeout_s = 600;    ///< a worker's wait for a coordinator, each time
};

/// Runs the job's worker steps to their end; 0 when each ended well. SIGUSR1 (the job's
/// time-limit warning, `#SBATCH --signal=B:USR1@...`) and SIGTERM are passed to them.
int run_join(const JoinOptions& options);

}  // namespace slurmtune::runtime
