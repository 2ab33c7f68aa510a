#pragma once
// Which GPUs the local launcher may hand out to trials (a workstation, or a node where
// `slurmtune run --launcher local` runs). Inside Slurm job steps Slurm does this itself.
#include <map>
#include <string>
#include <vector>

namespace slurmtune::runtime {

struct LocalGpus {
  std::vector<std::string> devices;  ///< as CUDA_VISIBLE_DEVICES names them
  std::string source;                ///< where they came from, for the log and errors
};

/// The devices a CUDA_VISIBLE_DEVICES value names: its entries up to the first that
/// names no device ("" and "-1" name none; CUDA ignores everything from there on).
std::vector<std::string> cuda_visible_devices(const std::string& value);

/// In order of precedence: `option` (run --gpus: "N" for devices 0..N-1, or a list
/// "0,2,3"), CUDA_VISIBLE_DEVICES from `env` (the devices this process may use; CUDA
/// ignores entries from the first invalid one on), the NVIDIA driver's GPUs (one entry
/// per device in `driver_dir`), else none. Throws InputError on a malformed option.
LocalGpus find_local_gpus(const std::string& option, const std::map<std::string, std::string>& env,
                          const std::string& driver_dir = "/proc/driver/nvidia/gpus");

/// CUDA_VISIBLE_DEVICES for a trial given the GPUs at `positions` of its worker's own
/// `worker_visible` list (what Slurm gave the worker step; empty: the devices are named
/// by those positions). Throws ProtocolError for a position the worker does not have.
std::string visible_devices_for(const std::vector<std::string>& positions,
                                const std::string& worker_visible);

}  // namespace slurmtune::runtime
