#pragma once
// Data parallelism inside one trial, Horovod's way, over the trial's communicator: every
// rank trains a replica on its shard of the batch; gradients are averaged with an
// allreduce; initial parameters come from trial rank 0; the learning rate scales with
// the number of replicas, reached by a linear warm-up (Goyal et al. 2017, "Accurate,
// Large Minibatch SGD").
#include <span>

#include "slurmtune/trial.hpp"

namespace slurmtune::dp {

/// In place: every rank ends with the mean over the trial's ranks.
void average(const Trial& t, std::span<double> values);
/// In place: every rank ends with the sum over the trial's ranks.
void sum(const Trial& t, std::span<double> values);
/// In place: every rank ends with trial rank `root`'s values.
void broadcast(const Trial& t, std::span<double> values, int root = 0);
/// Each rank's values, concatenated in rank order (size() * values.size() entries).
std::vector<double> allgather(const Trial& t, std::span<const double> values);

/// Device buffers (CUDA): `values` points to `n` floats on this rank's GPU. With an NCCL
/// communicator (t.nccl_comm()) this is one ncclAllReduce(ncclAvg); without one the
/// buffer goes through host memory and MPI. Throws ClientError when built without CUDA.
void average_device(Trial& t, float* values, std::size_t n);

/// lr × size: the learning rate for `size` replicas (linear scaling rule).
double scaled_lr(double lr, int size);
/// Warm-up: from lr at epoch 0 linearly to lr × size at `warmup_epochs` (fractional
/// epochs allowed), lr × size afterwards; warmup_epochs = 0 means no warm-up.
double warmup_lr(double lr, int size, double epoch, double warmup_epochs);
/// The device a rank should use: its local rank modulo the node's devices (-1: none).
int device_for(const Trial& t, int devices_on_node);

/// The rows [first, last) of `n` that trial rank `rank` of `size` owns (contiguous shards
/// whose sizes differ by at most one).
std::pair<std::size_t, std::size_t> shard(std::size_t n, int rank, int size);

}  // namespace slurmtune::dp
