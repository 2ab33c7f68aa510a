// GPUs inside a trial: Trial::nccl_comm (built with -DSLURMTUNE_ENABLE_NCCL=ON) and
// dp::average_device (-DSLURMTUNE_ENABLE_CUDA=ON; through NCCL when it is there). Without
// a GPU at run time both fall back, saying so once.
#include <cstdio>
#include <utility>
#include <vector>

#include "slurmtune/dp.hpp"
#include "slurmtune/trial.hpp"
#include "trial/communicator.hpp"

#ifdef SLURMTUNE_HAVE_CUDA
#include <cuda_runtime.h>
#endif
#ifdef SLURMTUNE_HAVE_NCCL
#include <nccl.h>
#endif

namespace slurmtune {

#ifdef SLURMTUNE_HAVE_NCCL
namespace {
// Every rank must agree: one rank without a GPU means no NCCL for the whole trial.
bool every_rank_has_a_gpu(MPI_Comm comm, int& devices, std::string& why) {
  devices = 0;
  const cudaError_t rc = cudaGetDeviceCount(&devices);
  int mine = rc == cudaSuccess && devices > 0 ? 1 : 0, all = 0;
  if (!mine) why = rc == cudaSuccess ? "no GPU visible" : cudaGetErrorString(rc);
  trial::mpi_check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (!all && why.empty()) why = "a rank of the trial sees no GPU";
  return all != 0;
}

struct NcclDestroy {
  void operator()(void* comm) const { ncclCommDestroy(static_cast<ncclComm_t>(comm)); }
};
}  // namespace

void* Trial::nccl_comm() {
  if (nccl_tried_) return nccl_.get();
  nccl_tried_ = true;
  int devices = 0;
  std::string why;
  static bool said = false;  // once per process, not once per trial
  if (!every_rank_has_a_gpu(comm(), devices, why)) {
    if (rank_ == 0 && !std::exchange(said, true))
      std::fprintf(stderr, "slurmtune: trial %llu: %s; using MPI collectives instead of NCCL\n",
                   static_cast<unsigned long long>(id_), why.c_str());
    return nullptr;
  }
  cudaSetDevice(local_rank_ % devices);
  ncclUniqueId unique{};
  if (rank_ == 0) ncclGetUniqueId(&unique);
  trial::mpi_check(MPI_Bcast(&unique, sizeof unique, MPI_BYTE, 0, comm()), "MPI_Bcast");
  ncclComm_t comm = nullptr;
  const ncclResult_t rc = ncclCommInitRank(&comm, size_, unique, rank_);
  if (rc != ncclSuccess) {
    if (rank_ == 0)
      std::fprintf(stderr, "slurmtune: trial %llu: ncclCommInitRank: %s; using MPI collectives\n",
                   static_cast<unsigned long long>(id_), ncclGetErrorString(rc));
    return nullptr;
  }
  nccl_ = std::shared_ptr<void>(comm, NcclDestroy{});
  return nccl_.get();
}

#else  // built without NCCL

void* Trial::nccl_comm() {
  static bool said = false;  // once per process, not once per trial
  if (!nccl_tried_ && rank_ == 0 && !std::exchange(said, true))
    std::fprintf(stderr,
                 "slurmtune: trial %llu: built without CUDA/NCCL "
                 "(-DSLURMTUNE_ENABLE_CUDA=ON); using MPI collectives\n",
                 static_cast<unsigned long long>(id_));
  nccl_tried_ = true;
  return nullptr;
}

#endif

#ifdef SLURMTUNE_HAVE_CUDA

void dp::average_device(Trial& t, float* values, std::size_t n) {
#ifdef SLURMTUNE_HAVE_NCCL
  if (void* comm = t.nccl_comm()) {
    ncclAllReduce(values, values, n, ncclFloat, ncclAvg, static_cast<ncclComm_t>(comm), nullptr);
    cudaStreamSynchronize(nullptr);
    return;
  }
#endif
  std::vector<float> host(n);
  if (cudaMemcpy(host.data(), values, n * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess)
    throw ClientError("dp::average_device: the buffer is not on a GPU (no GPU visible?)");
  trial::mpi_check(
      MPI_Allreduce(MPI_IN_PLACE, host.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, t.comm()),
      "MPI_Allreduce");
  for (float& v : host)
    v /= static_cast<float>(t.size());
  cudaMemcpy(values, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
}

#else

void dp::average_device(Trial&, float*, std::size_t) {
  throw ClientError("dp::average_device needs slurmtune built with -DSLURMTUNE_ENABLE_CUDA=ON");
}

#endif

}  // namespace slurmtune
