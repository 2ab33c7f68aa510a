// `slurmtune worker`: the process on each node of a worker step. `slurmtune run` starts
// them with [resources] launch = "worker" (one srun, a task per node: srun ... --
// slurmtune worker) and gives them SLURMTUNE_ADDR and SLURMTUNE_WORKER_CREDENTIALS, the
// folder where each finds its credential by its node's name (SLURMD_NODENAME), and past
// a thousand nodes SLURMTUNE_RELAYS and SLURMTUNE_RELAY_FANOUT (the relay tier);
// `slurmtune join` starts them with --study and the nodes' size. Users never run it.
#include <cstdlib>
#include <exception>
#include <string>

#include "cli/options.hpp"
#include "core/error.hpp"
#include "runtime/control/credential_files.hpp"
#include "runtime/study_paths.hpp"
#include "runtime/worker/worker.hpp"

namespace slurmtune::cli {
namespace {

std::string required_env(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value)
    throw InputError(std::string(name) +
                     " is not set: workers are started by 'slurmtune run' or 'slurmtune join'");
  return value;
}

// The node this worker serves: --node, or the node Slurm started its task on.
void name_the_node(runtime::WorkerOptions& options) {
  if (options.node.empty()) options.node = required_env("SLURMD_NODENAME");
}

std::size_t count_in_env(const char* name) {
  const std::string text = required_env(name);
  std::size_t used = 0;
  unsigned long value = 0;
  try {
    value = std::stoul(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.front() == '-')
    throw InputError(std::string(name) + "='" + text + "' is not a count");
  return value;
}

// Its place in the relay tier (runtime/worker/relay_tree.hpp): SLURMTUNE_RELAYS (the
// folder where relays publish themselves) and SLURMTUNE_RELAY_FANOUT from `slurmtune
// run`, and its node's place in the step from Slurm (SLURM_NODEID).
void relay_place(runtime::WorkerOptions& options) {
  const char* folder = std::getenv("SLURMTUNE_RELAYS");
  if (!folder || !*folder) return;
  options.relay.folder = folder;
  options.relay.fanout = count_in_env("SLURMTUNE_RELAY_FANOUT");
  if (options.relay.fanout > 1) options.relay.index = count_in_env("SLURM_NODEID");
}

void from_environment(runtime::WorkerOptions& options) {
  options.address = required_env("SLURMTUNE_ADDR");
  name_the_node(options);
  options.token_file =
      runtime::worker_credential_file(required_env("SLURMTUNE_WORKER_CREDENTIALS"), options.node);
  relay_place(options);
  if (const char* agents = std::getenv("SLURMTUNE_AGENTS")) options.agents_folder = agents;
}

}  // namespace

int worker_command(const Args& args) {
  po::options_description options("worker options (set by slurmtune join)");
  runtime::WorkerOptions worker;
  options.add_options()("study", po::value<std::string>(&worker.study),
                        "a joined job's worker: the results file")(
      "allocation", po::value<std::string>(&worker.allocation), "the joined job's id")(
      "node", po::value<std::string>(&worker.node),
      "the node it serves (default: SLURMD_NODENAME, the node of its task)")(
      "cpus", po::value<std::int64_t>(&worker.cpus)->default_value(0), "its CPUs for trials")(
      "gpus", po::value<std::int64_t>(&worker.gpus)->default_value(0), "its GPUs for trials")(
      "reconnect-timeout", po::value<double>(&worker.reconnect_timeout_s)->default_value(600),
      "seconds to look for a coordinator")(
      "relay-wait", po::value<double>(&worker.relay_wait_s)->default_value(worker.relay_wait_s),
      "seconds to wait for its relay's address before connecting directly");
  po::variables_map vm;
  if (!parse_options(args,
                     "slurmtune worker (started by slurmtune run, with SLURMTUNE_ADDR and "
                     "SLURMTUNE_WORKER_CREDENTIALS set)\n"
                     "       slurmtune worker --study STUDY.h5 --allocation JOB [--node NODE] "
                     "--cpus N (started by slurmtune join)",
                     options, {}, vm))
    return kSuccess;
  if (!(worker.relay_wait_s > 0)) throw InputError("--relay-wait must be > 0 seconds");
  if (worker.study.empty()) {
    from_environment(worker);
    return runtime::run_worker(worker);
  }
  name_the_node(worker);
  if (worker.allocation.empty() || worker.cpus <= 0)
    throw InputError("worker --study needs --allocation and --cpus > 0");
  if (!(worker.reconnect_timeout_s > 0))
    throw InputError("--reconnect-timeout must be > 0 seconds");
  worker.scratch = runtime::trials_dir_of(worker.study) + "/squeue-" + worker.allocation + "-" +
                   worker.node + ".out";
  return runtime::run_worker(worker);
}

}  // namespace slurmtune::cli
