#pragma once
// A fixed amount of GPU work for the device check's packing trials (gpu_pack_trial.cpp):
// a buffer on the trial's one visible device, iterated by a kernel whose result is known
// exactly, so a trial proves it allocated and computed on the device it was given.
#include <cstddef>
#include <string>

namespace slurmtune::gpu_check {

/// The device a trial sees (CUDA's device 0, after CUDA_VISIBLE_DEVICES).
struct SeenDevice {
  int count = 0;  ///< cudaGetDeviceCount: devices this process can see
  int pci_domain = -1, pci_bus = -1, pci_device = -1;
  std::string name;
  std::string error;  ///< why none is usable (no driver, no device), empty otherwise
};

SeenDevice seen_device();

/// Runs `launches` kernels over `elements` floats on device 0 and returns the largest
/// distance of the result from its exact value (0 when the device computed right).
/// Throws std::runtime_error with CUDA's message on any failed call.
double run_kernels(std::size_t elements, int launches);

}  // namespace slurmtune::gpu_check
