// What the device check records about a GPU machine: the CUDA driver and runtime
// versions, NCCL's version, and every visible device (name, PCI address, memory), one
// `key: value` line each. Built only with CUDA and NCCL.
#include <cuda_runtime.h>
#include <nccl.h>

#include <iostream>
#include <string>

namespace {

std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace

int main() {
  int driver = 0, runtime = 0, nccl = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  ncclGetVersion(&nccl);
  std::cout << "cuda_driver_api: " << (driver > 0 ? cuda_version(driver) : "none") << '\n'
            << "cuda_runtime: " << cuda_version(runtime) << '\n'
            << "nccl: " << nccl / 10000 << '.' << nccl / 100 % 100 << '.' << nccl % 100 << '\n';
  int count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    std::cout << "devices: 0 (" << cudaGetErrorString(status) << ")\n";
    return 0;
  }
  std::cout << "devices: " << count << '\n';
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    std::cout << "device " << i << ": " << p.name << ", PCI " << p.pciDomainID << ':' << p.pciBusID
              << ':' << p.pciDeviceID << ", " << p.totalGlobalMem / (1 << 20) << " MiB, sm_"
              << p.major << p.minor << ", " << p.multiProcessorCount << " SMs\n";
  }
  return 0;
}
