// A trial group program for GPU machines ([trial] mode = "mpi"): each trial builds an
// NCCL communicator over its MPI communicator (Trial::nccl_comm) and averages a device
// buffer with dp::average_device, checking the result. Built with
// -DSLURMTUNE_ENABLE_CUDA=ON; on a machine without a GPU it reports gpu = 0 (the MPI
// fallback) instead of failing.
#include <cuda_runtime.h>

#include <cmath>
#include <slurmtune/dp.hpp>
#include <slurmtune/trial.hpp>
#include <stdexcept>
#include <vector>

namespace {

void train(slurmtune::Trial& t) {
  const bool gpu = t.nccl_comm() != nullptr;
  double error = 0;
  if (gpu) {
    constexpr std::size_t n = 1 << 20;
    std::vector<float> host(n, static_cast<float>(t.rank() + 1));
    float* device = nullptr;
    if (cudaMalloc(&device, n * sizeof(float)) != cudaSuccess)
      throw std::runtime_error("cudaMalloc");
    cudaMemcpy(device, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    slurmtune::dp::average_device(t, device, n);
    cudaMemcpy(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(device);
    const float expected = (t.size() + 1) / 2.0f;  // mean of 1..size
    for (const float v : host)
      error = std::max(error, static_cast<double>(std::fabs(v - expected)));
  }
  const double x = t.param<double>("x");
  for (int step = 1; step <= 3; ++step)
    if (t.report(step, {{"loss", x / step}, {"gpu", gpu ? 1.0 : 0.0}, {"error", error}}) !=
        slurmtune::Decision::Continue)
      return;
}

}  // namespace

int main(int argc, char** argv) {
  return slurmtune::run_trials(argc, argv, train);
}
