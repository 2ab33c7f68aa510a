// `slurmtune rank-exec -- PROGRAM ARGS...`: runs PROGRAM (execvp, no shell) with RANK,
// LOCAL_RANK and NODE_RANK set from what srun or mpirun gave this process, so
// torch.distributed's env:// rendezvous, torchrun-style scripts and Horovod find them.
// `slurmtune run` puts it in front of every multi-rank trial command; MASTER_ADDR,
// MASTER_PORT, WORLD_SIZE and LOCAL_WORLD_SIZE come from the coordinator.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/placement/rendezvous.hpp"
#include "runtime/launch/launcher.hpp"

namespace slurmtune::cli {

int rank_exec_command(const Args& args) {
  constexpr const char* kUsageText =
      "usage: slurmtune rank-exec -- PROGRAM [ARGS...]\n\n"
      "Runs PROGRAM (no shell) with RANK, LOCAL_RANK and NODE_RANK set from SLURM_PROCID,\n"
      "SLURM_LOCALID and SLURM_NODEID (srun) or OMPI_COMM_WORLD_RANK and\n"
      "OMPI_COMM_WORLD_LOCAL_RANK (mpirun). slurmtune run puts it in front of multi-rank\n"
      "trial commands.\n";
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << kUsageText;
    return kSuccess;
  }
  const std::size_t first = !args.empty() && args[0] == "--" ? 1 : 0;
  if (first >= args.size()) {
    std::cerr << kUsageText;
    return kUsage;
  }
  const auto ranks = core::rank_environment(runtime::environment_map());
  if (ranks.empty())
    throw InputError(
        "neither srun (SLURM_PROCID) nor mpirun (OMPI_COMM_WORLD_RANK) "
        "started this process; nothing to set RANK from");
  for (const auto& [name, value] : ranks)
    ::setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> argv;
  for (std::size_t i = first; i < args.size(); ++i)
    argv.push_back(const_cast<char*>(args[i].c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  throw Error("cannot run '" + args[first] + "': " + std::strerror(errno));
}

}  // namespace slurmtune::cli
