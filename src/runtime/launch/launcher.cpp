#include "runtime/launch/launcher.hpp"

#include <unistd.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/placement/hostlist.hpp"
#include "runtime/launch/local_gpus.hpp"

extern char** environ;

namespace slurmtune::runtime {
namespace {

class LocalLauncher final : public Launcher {
 public:
  LocalLauncher(std::int64_t slots, const core::SlotRequest& request, std::string mpirun,
                std::int64_t ranks, std::int64_t cpus_per_rank,
                std::optional<core::DevicePool> gpus)
      : Launcher(
            core::ResourceLedger({core::NodeCapacity{
                "localhost", slots,
                gpus ? static_cast<std::int64_t>(gpus->size()) * gpus->trials_per_device() : 0}}),
            request, gpus ? std::vector{*gpus} : std::vector<core::DevicePool>{}),
        gpu_summary_(
            gpus ? ", GPUs " + core::join_devices(gpus->devices()) +
                       (gpus->trials_per_device() > 1
                            ? " (" + std::to_string(gpus->trials_per_device()) + " trials per GPU)"
                            : "")
                 : ""),
        slots_(slots),
        mpirun_(std::move(mpirun)),
        ranks_(ranks),
        cpus_per_rank_(cpus_per_rank) {}

  bool single_host() const override { return true; }

  std::string describe() const override {
    return "local launcher: " + std::to_string(slots_) + " slot(s)" + gpu_summary_ + ", " +
           std::to_string(capacity()) + " trial(s) at once" +
           (ranks_ > 1 ? ", " + mpirun_ + " -np " + std::to_string(ranks_) + " per trial" : "");
  }

  std::vector<std::string> wrap(const TrialResources&,
                                const std::vector<std::string>& argv) const override {
    if (ranks_ <= 1) return argv;
    std::vector<std::string> out = {mpirun_, "-np", std::to_string(ranks_)};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

  std::vector<std::string> whole_step(const std::vector<std::string>& program) const override {
    std::vector<std::string> out = {mpirun_, "-np", std::to_string(slots_ / cpus_per_rank_)};
    out.insert(out.end(), program.begin(), program.end());
    return out;
  }

 private:
  std::string gpu_summary_;
  std::int64_t slots_;
  std::string mpirun_;
  std::int64_t ranks_;
  std::int64_t cpus_per_rank_;
};

// Worker steps' GPUs, handed out by slurmtune: each node's devices by their position in
// its worker's CUDA_VISIBLE_DEVICES ("0" .. "N-1"). A step per trial leaves it to Slurm.
std::vector<core::DevicePool> worker_gpu_pools(const SlurmAllocation& allocation,
                                               const core::ResourceSpec& resources) {
  std::vector<core::DevicePool> pools;
  // Trials of several ranks start as steps even on worker launch: Slurm binds their GPUs.
  if (resources.launch != core::ResourceSpec::Launch::Worker || resources.gpus_per_task == 0 ||
      resources.ranks() > 1)
    return pools;
  for (const auto& node : allocation.nodes) {
    std::vector<std::string> positions;
    for (std::int64_t i = 0; i < node.gpus; ++i)
      positions.push_back(std::to_string(i));
    pools.emplace_back(std::move(positions), 1);
  }
  return pools;
}

class SlurmLauncher final : public Launcher {
 public:
  SlurmLauncher(SlurmAllocation allocation, const core::ResourceSpec& resources,
                const LaunchOptions& options)
      : Launcher(
            core::ResourceLedger(allocation.nodes),
            core::SlotRequest{resources.nodes, resources.ntasks_per_node * resources.cpus_per_task,
                              resources.ntasks_per_node * resources.gpus_per_task},
            worker_gpu_pools(allocation, resources)),
        job_id_(std::move(allocation.job_id)),
        coordinator_node_(std::move(allocation.coordinator_node)),
        coordinator_cpus_(allocation.coordinator_cpus),
        resources_(resources),
        options_(options) {}

  std::string describe() const override {
    std::int64_t cpus = 0;
    std::vector<std::string> names;
    for (const auto& node : ledger().nodes()) {
      cpus += node.cpus;
      names.push_back(node.name);
    }
    return "slurm launcher: job " + job_id_ + ", " + std::to_string(names.size()) + " node(s) " +
           core::compress_hostlist(names) + ", " + std::to_string(cpus) + " CPU(s) for trials" +
           (coordinator_cpus_ > 0 ? " (" + std::to_string(coordinator_cpus_) + " of " +
                                        coordinator_node_ + " kept for the coordinator)"
                                  : "") +
           ", " + std::to_string(capacity()) + " trial(s) at once";
  }

  std::vector<std::string> wrap(const TrialResources& placement,
                                const std::vector<std::string>& argv) const override {
    const auto& r = resources_;
    std::vector<std::string> out = {
        options_.srun,
        "--exact",
        "--nodes=" + std::to_string(r.nodes),
        "--ntasks=" + std::to_string(r.ranks()),
        "--ntasks-per-node=" + std::to_string(r.ntasks_per_node),
        "--cpus-per-task=" + std::to_string(r.cpus_per_task),
        "--nodelist=" + placement.hostlist,
        "--kill-on-bad-exit=1",
    };
    gpu_options(out);
    if (options_.step_time_limit_min)
      out.push_back("--time=" + std::to_string(*options_.step_time_limit_min));
    const bool multi_rank = r.ranks() > 1;
    if (options_.mpi != "auto")
      out.push_back("--mpi=" + options_.mpi);
    else if (multi_rank)
      out.push_back("--mpi=pmix");
    out.insert(out.end(), options_.srun_args.begin(), options_.srun_args.end());
    out.push_back("--");
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

  std::string job_id() const override { return job_id_; }

  std::vector<std::string> worker_step(const std::vector<std::size_t>& nodes,
                                       const std::vector<std::string>& program) const override {
    const auto& shape = ledger().nodes().at(nodes.at(0));
    std::vector<std::string> names;
    for (const std::size_t node : nodes)
      names.push_back(ledger().nodes().at(node).name);
    if (resources_.ranks() > 1) {
      // Trials of several ranks start as their own steps; the workers only carry their
      // traffic (node agents): a core each, shared with those steps (--overlap), which
      // Slurm then gives every core and GPU of the ledger's placement.
      auto argv = worker_step_argv(options_.srun, names, 1, 0, options_.srun_args, program);
      argv.insert(argv.begin() + 1, "--overlap");
      return argv;
    }
    // The nodes' GPUs, which each worker hands out to its trials (CUDA_VISIBLE_DEVICES).
    const std::int64_t gpus = resources_.gpus_per_task > 0 ? shape.gpus : 0;
    return worker_step_argv(options_.srun, names, shape.cpus, gpus, options_.srun_args, program);
  }

  std::vector<std::string> whole_step(const std::vector<std::string>& program) const override {
    const auto& r = resources_;
    std::vector<std::string> out = {
        options_.srun,
        "--nodes=" + std::to_string(ledger().nodes().size()),
        "--ntasks-per-node=" + std::to_string(r.ntasks_per_node),
        "--cpus-per-task=" + std::to_string(r.cpus_per_task),
        "--kill-on-bad-exit=1",
        "--mpi=" + (options_.mpi == "auto" ? std::string("pmix") : options_.mpi),
    };
    gpu_options(out);
    out.insert(out.end(), options_.srun_args.begin(), options_.srun_args.end());
    out.push_back("--");
    out.insert(out.end(), program.begin(), program.end());
    return out;
  }

 private:
  void gpu_options(std::vector<std::string>& out) const {
    if (resources_.gpus_per_task == 0) return;
    out.push_back("--gpus-per-task=" + std::to_string(resources_.gpus_per_task));
    if (resources_.gpu_bind) out.push_back("--gpu-bind=" + *resources_.gpu_bind);
  }

  std::string job_id_, coordinator_node_;
  std::int64_t coordinator_cpus_;
  core::ResourceSpec resources_;
  LaunchOptions options_;
};

std::string lookup(const std::map<std::string, std::string>& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

// SLURM_GPUS_PER_NODE is "4" or "a100:4" (or a list for heterogeneous requests, which
// slurmtune does not split: the first entry counts).
std::int64_t gpus_per_node(const std::map<std::string, std::string>& env) {
  std::string text = lookup(env, "SLURM_GPUS_PER_NODE");
  if (text.empty()) text = lookup(env, "SLURM_GPUS_ON_NODE");
  if (text.empty()) return 0;
  text = text.substr(0, text.find(','));
  const std::string count = text.substr(text.rfind(':') + 1);
  try {
    std::size_t used = 0;
    const long long n = std::stoll(count, &used);
    if (used == count.size() && n >= 0) return n;
  } catch (const std::exception&) {
  }
  throw InputError("cannot read the GPU count from SLURM_GPUS_PER_NODE/SLURM_GPUS_ON_NODE='" +
                   text + "'");
}

// The GPUs local trials share out, refusing a trial that could never get its `per_trial`.
core::DevicePool local_gpu_pool(std::int64_t per_trial, const LaunchOptions& options) {
  const LocalGpus found = find_local_gpus(options.gpus, environment_map());
  const std::string need = "one trial needs " + std::to_string(per_trial) +
                           " GPU(s) ([resources] ranks x gpus_per_task) but ";
  if (found.devices.empty())
    throw InputError(need + "the local launcher found none (" + found.source +
                     "); name them with --gpus N or --gpus 0,1, or set gpus_per_task = 0");
  if (static_cast<std::int64_t>(found.devices.size()) < per_trial)
    throw InputError(need + "the local launcher has " + std::to_string(found.devices.size()) +
                     " (" + found.source + ")");
  return core::DevicePool(found.devices, options.trials_per_gpu);
}

}  // namespace

std::vector<std::string> worker_step_argv(const std::string& srun,
                                          const std::vector<std::string>& nodes, std::int64_t cpus,
                                          std::int64_t gpus,
                                          const std::vector<std::string>& srun_args,
                                          const std::vector<std::string>& program) {
  const std::string count = std::to_string(nodes.size());
  std::vector<std::string> out = {srun,
                                  "--exact",
                                  "--nodes=" + count,
                                  "--ntasks=" + count,
                                  "--ntasks-per-node=1",
                                  "--cpus-per-task=" + std::to_string(cpus),
                                  "--nodelist=" + core::compress_hostlist(nodes),
                                  "--kill-on-bad-exit=0",
                                  "--mpi=none"};
  if (gpus > 0) out.push_back("--gpus-per-node=" + std::to_string(gpus));
  out.insert(out.end(), srun_args.begin(), srun_args.end());
  out.push_back("--");
  out.insert(out.end(), program.begin(), program.end());
  return out;
}

Launcher::Launcher(core::ResourceLedger ledger, core::SlotRequest request,
                   std::vector<core::DevicePool> gpus)
    : ledger_(std::move(ledger)), request_(request) {
  ledger_.check_fits(request_);
  if (!gpus.empty() && gpus.size() != ledger_.nodes().size())
    throw UsageError("Launcher: one GPU pool per node, or none");
  for (std::size_t node = 0; node < gpus.size(); ++node)
    gpus_.emplace(node, std::move(gpus[node]));
}

std::size_t Launcher::add_node(const core::NodeCapacity& node) {
  if (!core::ResourceLedger::holds(node, request_))
    throw InputError("node " + node.name + " of job " + node.allocation + " has " +
                     std::to_string(node.cpus) + " CPU(s) and " + std::to_string(node.gpus) +
                     " GPU(s), but one trial needs " + std::to_string(request_.cpus_per_node) +
                     " CPU(s) and " + std::to_string(request_.gpus_per_node) + " GPU(s)");
  const std::size_t index = ledger_.add_node(node);
  if (request_.gpus_per_node > 0) {
    std::vector<std::string> positions;
    for (std::int64_t i = 0; i < node.gpus; ++i)
      positions.push_back(std::to_string(i));
    gpus_.emplace(index, core::DevicePool(std::move(positions), 1));
  }
  return index;
}

std::optional<TrialResources> Launcher::reserve() {
  auto nodes = ledger_.acquire(request_);
  if (!nodes) return std::nullopt;
  return placed(std::move(*nodes));
}

std::optional<TrialResources> Launcher::reserve_on(std::size_t node) {
  auto nodes = ledger_.acquire_on(node, request_);
  if (!nodes) return std::nullopt;
  return placed(std::move(*nodes));
}

std::optional<TrialResources> Launcher::placed(std::vector<std::size_t> nodes) {
  TrialResources placement;
  if (const auto pool = gpus_.find(nodes.front());
      pool != gpus_.end() && request_.gpus_per_node > 0) {
    // The ledger counts GPU shares; the pool also keeps a trial's devices distinct. Pools
    // serve single-node trials (the local launcher's, worker steps').
    auto devices = pool->second.acquire(request_.gpus_per_node);
    if (!devices) {
      ledger_.release(nodes, request_);
      return std::nullopt;
    }
    placement.gpus = std::move(*devices);
  }
  placement.hostlist = ledger_.hostlist(nodes);
  placement.nodes = std::move(nodes);
  return placement;
}

std::vector<std::string> Launcher::worker_step(const std::vector<std::size_t>&,
                                               const std::vector<std::string>&) const {
  return {};
}

std::vector<std::string> Launcher::node_names() const {
  std::vector<std::string> names;
  for (const auto& node : ledger_.nodes())
    names.push_back(node.name);
  return names;
}

void Launcher::release(const TrialResources& placement) {
  ledger_.release(placement.nodes, request_);
  if (!placement.gpus.empty()) gpus_.at(placement.nodes.front()).release(placement.gpus);
}

ChildProcess Launcher::start(const TrialResources& placement, const TrialProcessSpec& spec) const {
  SpawnRequest request;
  request.argv = wrap(placement, spec.argv);
  request.env = spec.env;
  if (gpus_.contains(placement.nodes.front()))
    request.env["CUDA_VISIBLE_DEVICES"] = core::join_devices(placement.gpus);
  request.stdout_path = spec.stdout_path;
  request.stderr_path = spec.stderr_path;
  return ChildProcess::spawn(request);
}

std::map<std::string, std::string> environment_map() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos)
      env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

std::optional<SlurmAllocation> slurm_allocation(const std::map<std::string, std::string>& env) {
  SlurmAllocation allocation;
  allocation.job_id = lookup(env, "SLURM_JOB_ID");
  const std::string nodelist = lookup(env, "SLURM_JOB_NODELIST");
  if (allocation.job_id.empty() || nodelist.empty()) return std::nullopt;
  const auto names = core::expand_hostlist(nodelist);
  const std::string cpus_text = lookup(env, "SLURM_JOB_CPUS_PER_NODE");
  if (cpus_text.empty())
    throw InputError("inside Slurm job " + allocation.job_id +
                     " but SLURM_JOB_CPUS_PER_NODE is not set");
  const auto cpus = core::expand_counts(cpus_text);
  if (cpus.size() != names.size())
    throw InputError("SLURM_JOB_CPUS_PER_NODE='" + cpus_text + "' gives " +
                     std::to_string(cpus.size()) + " counts for the " +
                     std::to_string(names.size()) + " nodes of SLURM_JOB_NODELIST='" + nodelist +
                     "'");
  const std::int64_t gpus = gpus_per_node(env);
  for (std::size_t i = 0; i < names.size(); ++i)
    allocation.nodes.push_back(core::NodeCapacity{names[i], cpus[i], gpus});
  allocation.coordinator_node = lookup(env, "SLURMD_NODENAME");
  return allocation;
}

namespace {

// Keeps cores of the coordinator's node from trials: the coordinator answers every report
// and launch, and trials' ranks busy on every core of its node delay those answers.
void keep_coordinator_cpus(SlurmAllocation& allocation, const core::ResourceSpec& resources,
                           const LaunchOptions& options) {
  auto node = std::find_if(allocation.nodes.begin(), allocation.nodes.end(),
                           [&](const auto& n) { return n.name == allocation.coordinator_node; });
  if (node == allocation.nodes.end()) return;  // not on a node of the allocation (tests)
  const std::int64_t trial_cpus = resources.ntasks_per_node * resources.cpus_per_task;
  const std::int64_t keep = options.coordinator_cpus
                                ? *options.coordinator_cpus
                                : (node->cpus >= 16 && node->cpus - 1 >= trial_cpus ? 1 : 0);
  if (keep < 0 || keep >= node->cpus)
    throw InputError("--coordinator-cpus " + std::to_string(keep) + ": node " + node->name +
                     " has " + std::to_string(node->cpus) + " CPU(s); keep 0 to " +
                     std::to_string(node->cpus - 1));
  node->cpus -= keep;
  allocation.coordinator_cpus = keep;
}

}  // namespace

std::size_t trials_at_once(const Launcher& launcher, const core::ResourceSpec& resources) {
  const std::size_t fit = launcher.capacity();
  if (const auto& limit = resources.max_concurrent)
    return std::min(fit, static_cast<std::size_t>(*limit));
  return fit;
}

std::unique_ptr<Launcher> make_launcher(const core::ResourceSpec& resources,
                                        const LaunchOptions& options) {
  if (options.launcher != "local") {
    auto allocation = slurm_allocation(environment_map());
    if (allocation) {
      keep_coordinator_cpus(*allocation, resources, options);
      return std::make_unique<SlurmLauncher>(std::move(*allocation), resources, options);
    }
    if (options.launcher == "slurm")
      throw InputError(
          "--launcher slurm: not inside a Slurm allocation (SLURM_JOB_ID and "
          "SLURM_JOB_NODELIST are unset); run under sbatch or salloc");
  }
  const std::int64_t ranks = resources.ranks();
  const std::int64_t slots =
      options.slots > 0 ? options.slots : std::max<long>(1, ::sysconf(_SC_NPROCESSORS_ONLN));
  if (ranks * resources.cpus_per_task > slots)
    throw InputError("one trial needs " + std::to_string(ranks * resources.cpus_per_task) +
                     " slot(s) ([resources] nodes x ntasks_per_node x cpus_per_task) but the local "
                     "launcher has " +
                     std::to_string(slots) +
                     "; raise --slots (oversubscribing the cores) or shrink [resources]");
  const std::int64_t gpus = ranks * resources.gpus_per_task;
  return std::make_unique<LocalLauncher>(
      slots, core::SlotRequest{1, ranks * resources.cpus_per_task, gpus}, options.mpirun, ranks,
      resources.cpus_per_task,
      gpus > 0 ? std::optional(local_gpu_pool(gpus, options)) : std::nullopt);
}

}  // namespace slurmtune::runtime
