#include "runtime/worker/trial_child.hpp"

#include <cstdlib>

#include "runtime/launch/local_gpus.hpp"

namespace slurmtune::runtime {

SpawnRequest trial_child(const protocol::Launch& message, const std::string& node,
                         const std::string& agent_address) {
  SpawnRequest request;
  request.argv = message.argv;
  request.env = message.env;
  if (!agent_address.empty()) request.env["SLURMTUNE_ADDR"] = agent_address;
  // This worker is one task of a step across all workers' nodes; a trial it starts is
  // one process on this node, not task 3 of 4 (a client takes SLURM_PROCID as its rank).
  for (const char* name : {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_GTIDS"})
    request.env.try_emplace(name, "0");
  for (const char* name : {"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_STEP_NUM_TASKS",
                           "SLURM_STEP_NUM_NODES", "SLURM_STEP_TASKS_PER_NODE"})
    request.env.try_emplace(name, "1");
  request.env.try_emplace("SLURM_STEP_NODELIST", node);
  if (!message.gpus.empty()) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    request.env["CUDA_VISIBLE_DEVICES"] = visible_devices_for(message.gpus, visible ? visible : "");
  }
  request.stdout_path = message.stdout_path;
  request.stderr_path = message.stderr_path;
  request.inherit_sigusr1 = true;  // ignored: see run_worker
  return request;
}

}  // namespace slurmtune::runtime
