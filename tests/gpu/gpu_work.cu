// The GPU side of gpu_work.hpp, compiled by nvcc when slurmtune is built with CUDA.
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_work.hpp"

namespace slurmtune::gpu_check {
namespace {

// v <- v / 2 + 1 converges to exactly 2 in float within 25 steps from 0; the remaining
// steps are the work (one fused multiply-add each).
constexpr int kStepsPerLaunch = 4096;

__global__ void halve_and_add(float* x, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < kStepsPerLaunch; ++k)
    v = fmaf(v, 0.5f, 1.0f);
  x[i] = v;
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// Owner of one device allocation.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) { check(cudaMalloc(&data_, bytes), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* get() const { return static_cast<float*>(data_); }

 private:
  void* data_ = nullptr;
};

}  // namespace

SeenDevice seen_device() {
  SeenDevice seen;
  const cudaError_t status = cudaGetDeviceCount(&seen.count);
  if (status != cudaSuccess) {
    seen.count = 0;
    seen.error = cudaGetErrorString(status);
    return seen;
  }
  if (seen.count == 0) {
    seen.error = "no CUDA device visible";
    return seen;
  }
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  seen.pci_domain = properties.pciDomainID;
  seen.pci_bus = properties.pciBusID;
  seen.pci_device = properties.pciDeviceID;
  seen.name = properties.name;
  return seen;
}

double run_kernels(std::size_t elements, int launches) {
  check(cudaSetDevice(0), "cudaSetDevice");
  DeviceBuffer buffer(elements * sizeof(float));
  check(cudaMemset(buffer.get(), 0, elements * sizeof(float)), "cudaMemset");
  constexpr unsigned kThreads = 256;
  const auto blocks = static_cast<unsigned>((elements + kThreads - 1) / kThreads);
  for (int i = 0; i < launches; ++i)
    halve_and_add<<<blocks, kThreads>>>(buffer.get(), elements);
  check(cudaGetLastError(), "kernel launch");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::vector<float> host(elements);
  check(cudaMemcpy(host.data(), buffer.get(), elements * sizeof(float), cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  double worst = 0;
  for (const float v : host)
    worst = std::max(worst, static_cast<double>(std::fabs(v - 2.0f)));
  return worst;
}

}  // namespace slurmtune::gpu_check
