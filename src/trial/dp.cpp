#include "slurmtune/dp.hpp"

#include <algorithm>

#include "trial/communicator.hpp"

namespace slurmtune::dp {

void sum(const Trial& t, std::span<double> values) {
  trial::mpi_check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()),
                                 MPI_DOUBLE, MPI_SUM, t.comm()),
                   "MPI_Allreduce");
}

void average(const Trial& t, std::span<double> values) {
  sum(t, values);
  for (double& v : values)
    v /= t.size();
}

void broadcast(const Trial& t, std::span<double> values, int root) {
  trial::mpi_check(
      MPI_Bcast(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, root, t.comm()),
      "MPI_Bcast");
}

std::vector<double> allgather(const Trial& t, std::span<const double> values) {
  std::vector<double> out(values.size() * static_cast<std::size_t>(t.size()));
  trial::mpi_check(MPI_Allgather(values.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                                 out.data(), static_cast<int>(values.size()), MPI_DOUBLE, t.comm()),
                   "MPI_Allgather");
  return out;
}

double scaled_lr(double lr, int size) {
  return lr * size;
}

double warmup_lr(double lr, int size, double epoch, double warmup_epochs) {
  if (warmup_epochs <= 0 || epoch >= warmup_epochs) return lr * size;
  return lr * (1.0 + (size - 1.0) * std::max(0.0, epoch) / warmup_epochs);
}

int device_for(const Trial& t, int devices_on_node) {
  return devices_on_node > 0 ? t.local_rank() % devices_on_node : -1;
}

std::pair<std::size_t, std::size_t> shard(std::size_t n, int rank, int size) {
  const auto r = static_cast<std::size_t>(rank), s = static_cast<std::size_t>(size);
  const std::size_t base = n / s, extra = n % s;
  const std::size_t first = r * base + std::min(r, extra);
  return {first, first + base + (r < extra ? 1 : 0)};
}

}  // namespace slurmtune::dp
