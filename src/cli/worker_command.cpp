// `slurmtune worker`: the process of a worker step. `slurmtune run` starts one per node
// with [resources] launch = "worker" (srun ... -- slurmtune worker) and gives it
// SLURMTUNE_ADDR, SLURMTUNE_TOKEN_FILE and SLURMTUNE_WORKER_NODE; users never run it.
#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "runtime/worker.hpp"

namespace slurmtune::cli {

int worker_command(const Args& args) {
  constexpr const char* kUsageText =
      "usage: slurmtune worker\n\n"
      "The process of a worker step ([resources] launch = \"worker\"): slurmtune run starts\n"
      "one per node, with SLURMTUNE_ADDR, SLURMTUNE_TOKEN_FILE and SLURMTUNE_WORKER_NODE\n"
      "set, and it starts that node's trials on the coordinator's instruction.\n";
  if (!args.empty()) {
    const bool help = args[0] == "--help" || args[0] == "-h";
    (help ? std::cout : std::cerr) << kUsageText;
    return help ? kSuccess : kUsage;
  }
  runtime::WorkerOptions options;
  for (const auto& [name, into] :
       {std::pair<const char*, std::string*>{"SLURMTUNE_ADDR", &options.address},
        {"SLURMTUNE_TOKEN_FILE", &options.token_file},
        {"SLURMTUNE_WORKER_NODE", &options.node}}) {
    const char* value = std::getenv(name);
    if (!value || !*value)
      throw InputError(std::string(name) + " is not set: workers are started by 'slurmtune run'");
    *into = value;
  }
  return runtime::run_worker(options);
}

}  // namespace slurmtune::cli
