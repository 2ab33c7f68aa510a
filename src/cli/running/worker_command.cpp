// `slurmtune worker`: the process of a worker step. `slurmtune run` starts one per node
// with [resources] launch = "worker" (srun ... -- slurmtune worker) and gives it
// SLURMTUNE_ADDR, SLURMTUNE_TOKEN_FILE and SLURMTUNE_WORKER_NODE; `slurmtune join`
// starts one per node of its job with --study and the node's size. Users never run it.
#include <cstdlib>

#include "cli/options.hpp"
#include "core/error.hpp"
#include "runtime/study_paths.hpp"
#include "runtime/worker/worker.hpp"

namespace slurmtune::cli {
namespace {

void from_environment(runtime::WorkerOptions& options) {
  for (const auto& [name, into] :
       {std::pair<const char*, std::string*>{"SLURMTUNE_ADDR", &options.address},
        {"SLURMTUNE_TOKEN_FILE", &options.token_file},
        {"SLURMTUNE_WORKER_NODE", &options.node}}) {
    const char* value = std::getenv(name);
    if (!value || !*value)
      throw InputError(std::string(name) +
                       " is not set: workers are started by 'slurmtune run' or 'slurmtune join'");
    *into = value;
  }
}

}  // namespace

int worker_command(const Args& args) {
  po::options_description options("worker options (set by slurmtune join)");
  runtime::WorkerOptions worker;
  options.add_options()("study", po::value<std::string>(&worker.study),
                        "a joined job's worker: the results file")(
      "allocation", po::value<std::string>(&worker.allocation), "the joined job's id")(
      "node", po::value<std::string>(&worker.node), "the node it serves")(
      "cpus", po::value<std::int64_t>(&worker.cpus)->default_value(0), "its CPUs for trials")(
      "gpus", po::value<std::int64_t>(&worker.gpus)->default_value(0), "its GPUs for trials")(
      "reconnect-timeout", po::value<double>(&worker.reconnect_timeout_s)->default_value(600),
      "seconds to look for a coordinator");
  po::variables_map vm;
  if (!parse_options(args,
                     "slurmtune worker (started by slurmtune run, with SLURMTUNE_ADDR, "
                     "SLURMTUNE_TOKEN_FILE and SLURMTUNE_WORKER_NODE set)\n"
                     "       slurmtune worker --study STUDY.h5 --allocation JOB --node NODE "
                     "--cpus N (started by slurmtune join)",
                     options, {}, vm))
    return kSuccess;
  if (worker.study.empty()) {
    from_environment(worker);
    return runtime::run_worker(worker);
  }
  if (worker.allocation.empty() || worker.node.empty() || worker.cpus <= 0)
    throw InputError("worker --study needs --allocation, --node and --cpus > 0");
  if (!(worker.reconnect_timeout_s > 0))
    throw InputError("--reconnect-timeout must be > 0 seconds");
  worker.scratch = runtime::trials_dir_of(worker.study) + "/squeue-" + worker.allocation + "-" +
                   worker.node + ".out";
  return runtime::run_worker(worker);
}

}  // namespace slurmtune::cli
