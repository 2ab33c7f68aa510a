#pragma once
// Launchers turn a trial's argv into running processes on free resources of the
// allocation. Both keep a ResourceLedger, so trials never share cores or GPUs:
//   SlurmLauncher  inside an sbatch/salloc allocation: one job step per trial,
//                  `srun --exact -N.. --ntasks-per-node.. -w <nodes> --mpi=pmix -- argv`,
//                  so each trial is its own MPI world on its own nodes;
//   LocalLauncher  a workstation: the command itself, or `mpirun -np N` for multi-rank
//                  trials, with --slots cores; trials that want GPUs get their own
//                  devices (CUDA_VISIBLE_DEVICES) from a core::DevicePool.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/placement/device_pool.hpp"
#include "core/placement/resource_ledger.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/study/study_spec.hpp"
#include "runtime/launch/child_process.hpp"

namespace slurmtune::runtime {

/// What to run for one attempt of one trial.
struct TrialProcessSpec {
  core::TrialId trial = 0;
  std::uint64_t attempt = 0;
  std::vector<std::string> argv;           ///< the expanded [trial] command
  std::map<std::string, std::string> env;  ///< SLURMTUNE_* variables
  std::string stdout_path, stderr_path;
  /// [checkpoints] node_local: the trial's folder on its node's own disk, which that
  /// node's worker makes before it starts the trial; empty otherwise.
  std::string checkpoint_dir_to_make;
};

/// Resources held by one running trial (or, layout "steps", one MPI step): its nodes in
/// the ledger and the GPUs slurmtune handed it. Not core::RankPlacement (where one rank
/// of a step runs) nor trial::RankLocation (where this rank found itself).
struct TrialResources {
  std::vector<std::size_t> nodes;  ///< indices into the ledger
  std::string hostlist;            ///< "n[1-2]"
  /// GPUs handed out by slurmtune (local launcher, worker steps): the trial's devices,
  /// as the process that starts it sees them; none where Slurm picks them (a step each).
  std::vector<std::string> gpus;
};

class Launcher {
 public:
  /// `gpus`: where slurmtune hands out GPUs itself, one pool per ledger node (the local
  /// launcher's devices; each worker step's); empty where Slurm does.
  Launcher(core::ResourceLedger ledger, core::SlotRequest request,
           std::vector<core::DevicePool> gpus = {});
  virtual ~Launcher() = default;
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  /// "slurm job 42: n[1-4], 16 CPUs" — for the log.
  virtual std::string describe() const = 0;
  /// Every trial runs on this host (the local launcher).
  virtual bool single_host() const { return false; }
  /// Resources for one trial, or nullopt when none are free now.
  std::optional<TrialResources> reserve();
  /// The same on `node` alone (a one-node trial resuming where its checkpoint is).
  std::optional<TrialResources> reserve_on(std::size_t node);
  void release(const TrialResources& placement);
  /// Starts the trial on reserved resources (with CUDA_VISIBLE_DEVICES = its GPUs).
  ChildProcess start(const TrialResources& placement, const TrialProcessSpec& spec) const;
  /// The argv actually executed (the trial's argv wrapped in srun or mpirun).
  virtual std::vector<std::string> wrap(const TrialResources& placement,
                                        const std::vector<std::string>& argv) const = 0;
  /// Trials of this shape that fit in the whole allocation at once.
  std::size_t capacity() const { return ledger_.capacity(request_); }
  /// [trial] mode = "mpi": argv running `program` as one MPI step over the whole
  /// allocation (srun over every node, or mpirun over every slot).
  virtual std::vector<std::string> whole_step(const std::vector<std::string>& program) const = 0;
  /// [resources] launch = "worker": argv running `program` as the long-lived workers of
  /// `nodes` (ledger indices of one shape: the same cores and GPUs), one task per node
  /// holding its cores in one step, or empty where trials are this process's own
  /// children anyway (the local launcher).
  virtual std::vector<std::string> worker_step(const std::vector<std::size_t>& nodes,
                                               const std::vector<std::string>& program) const;
  /// Node names, by ledger index.
  std::vector<std::string> node_names() const;
  /// What node `node` (a ledger index) holds for trials.
  const core::NodeCapacity& node_capacity(std::size_t node) const {
    return ledger_.nodes().at(node);
  }
  /// Whether trials may be placed on `node` now (its worker step is connected).
  void set_node_usable(std::size_t node, bool usable) { ledger_.set_usable(node, usable); }
  /// A node of a joined job, served by its worker: its ledger index. Its GPUs (by their
  /// position in the worker's CUDA_VISIBLE_DEVICES) are handed out by slurmtune. Throws
  /// InputError when the node cannot hold one trial.
  std::size_t add_node(const core::NodeCapacity& node);
  /// The Slurm job of the allocation this process runs in ("" outside Slurm).
  virtual std::string job_id() const { return {}; }

 protected:
  const core::ResourceLedger& ledger() const { return ledger_; }
  const core::SlotRequest& request() const { return request_; }

 private:
  /// Devices and hostlist for nodes the ledger gave; nullopt (released) without devices.
  std::optional<TrialResources> placed(std::vector<std::size_t> nodes);

  core::ResourceLedger ledger_;
  core::SlotRequest request_;
  std::map<std::size_t, core::DevicePool> gpus_;  // by ledger node, where slurmtune hands them out
};

/// Options of `slurmtune run` that shape launches.
struct LaunchOptions {
  std::string launcher = "auto";       ///< auto | slurm | local
  std::int64_t slots = 0;              ///< local: cores to use (0: all online CPUs)
  std::string mpirun = "mpirun";       ///< local: MPI launcher for multi-rank trials
  std::string gpus;                    ///< local: --gpus, "N" or a device list ("": find them)
  std::int64_t trials_per_gpu = 1;     ///< local: trials that may share one GPU
  std::string srun = "srun";           ///< slurm: the srun to call
  std::string mpi = "pmix";            ///< slurm: --mpi type ("none": leave srun's default)
  std::vector<std::string> srun_args;  ///< slurm: extra arguments for every step
  /// slurm: cores of the coordinator's node kept from trials (nullopt: 1 where that
  /// node has 16 or more and a trial still fits beside it, else 0).
  std::optional<std::int64_t> coordinator_cpus;
  /// slurm: `srun --time` of trial steps, in minutes (Slurm's unit): a backstop that ends a
  /// step past [trial] time_limit_s even when the orchestrator is gone.
  std::optional<std::int64_t> step_time_limit_min;
};

/// The Slurm allocation this process runs in, from the SLURM_* environment.
struct SlurmAllocation {
  std::string job_id;
  std::vector<core::NodeCapacity> nodes;
  std::string coordinator_node;       ///< the node this process runs on (SLURMD_NODENAME)
  std::int64_t coordinator_cpus = 0;  ///< its cores kept from trials
};
/// Reads SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE and the GPU variables
/// from `env`; nullopt when not inside an allocation. Throws InputError naming the
/// variable when one is malformed.
std::optional<SlurmAllocation> slurm_allocation(const std::map<std::string, std::string>& env);
/// This process's environment as a map.
std::map<std::string, std::string> environment_map();

/// `srun ... -- program`: one step whose task on each of `nodes` (a task per node, each
/// holding `cpus` and `gpus` there) is that node's worker, in the allocation this process
/// runs in. One launch for all of them: a step per node would be as many `srun`s on this
/// node, each a process, each against slurmctld's step rate. A task that fails does not
/// end the others (--kill-on-bad-exit=0): its node is given up alone.
std::vector<std::string> worker_step_argv(const std::string& srun,
                                          const std::vector<std::string>& nodes, std::int64_t cpus,
                                          std::int64_t gpus,
                                          const std::vector<std::string>& srun_args,
                                          const std::vector<std::string>& program);

/// The trials a study runs at once with `launcher`: as many as fit, `max_concurrent` at most.
std::size_t trials_at_once(const Launcher& launcher, const core::ResourceSpec& resources);

/// Picks and builds the launcher for `resources` (auto: Slurm inside an allocation,
/// local otherwise). Throws InputError when one trial could never fit.
std::unique_ptr<Launcher> make_launcher(const core::ResourceSpec& resources,
                                        const LaunchOptions& options);

}  // namespace slurmtune::runtime
