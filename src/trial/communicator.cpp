#include "trial/communicator.hpp"

#include <string>
#include <utility>

#include "slurmtune/client.hpp"

namespace slurmtune::trial {

void mpi_check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char reason[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, reason, &length) != MPI_SUCCESS) length = 0;
  throw ClientError(std::string(call) + " failed: " +
                    (length > 0 ? std::string(reason, static_cast<std::size_t>(length))
                                : "MPI error " + std::to_string(code)));
}

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  if (comm_ == MPI_COMM_NULL) return;
  const int code = MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  if (code != MPI_SUCCESS) {
    free();
    mpi_check(code, "MPI_Comm_set_errhandler");
  }
}

Communicator Communicator::duplicate(MPI_Comm comm) {
  MPI_Comm copy = MPI_COMM_NULL;
  mpi_check(MPI_Comm_dup(comm, &copy), "MPI_Comm_dup");
  return Communicator(copy);
}

Communicator Communicator::split(MPI_Comm comm, int color, int key) {
  MPI_Comm part = MPI_COMM_NULL;
  mpi_check(MPI_Comm_split(comm, color, key, &part), "MPI_Comm_split");
  return Communicator(part);
}

Communicator Communicator::node_local(MPI_Comm comm) {
  MPI_Comm local = MPI_COMM_NULL;
  mpi_check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local),
            "MPI_Comm_split_type");
  return Communicator(local);
}

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)) {}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    free();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
  }
  return *this;
}

Communicator::~Communicator() {
  free();
}

void Communicator::free() noexcept {
  if (comm_ == MPI_COMM_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  // After MPI_Finalize nothing may be called; the communicator went with MPI.
  if (!finalized) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
}

int Communicator::rank() const {
  return rank_of(comm_);
}

int Communicator::size() const {
  return size_of(comm_);
}

int rank_of(MPI_Comm comm) {
  int rank = 0;
  mpi_check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  return rank;
}

int size_of(MPI_Comm comm) {
  int size = 0;
  mpi_check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return size;
}

}  // namespace slurmtune::trial
