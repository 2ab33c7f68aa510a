#include "trial/collectives.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "trial/communicator.hpp"

namespace slurmtune::trial {
namespace {

constexpr int kHostChars = 256;

}  // namespace

// MPI_Bcast spins (Open MPI's default), and the ranks of a group waiting for their next
// assignment may wait long (no work yet); spinning there starves the group's rank 0 and
// the coordinator on a node whose every core is busy, and turned a 0.2 ms turnaround
// into one scheduler time slice (24 ms).
void wait_without_spinning(MPI_Request& request) {
  using namespace std::chrono_literals;
  const auto start = std::chrono::steady_clock::now();
  auto nap = std::chrono::microseconds(20);
  for (int done = 0;;) {
    mpi_check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    if (std::chrono::steady_clock::now() - start < 100us) continue;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
  }
}

void broadcast_string(std::string& text, MPI_Comm comm, Wait wait) {
  constexpr std::size_t kInline = 4096 - sizeof(int);
  char buffer[4096];
  const int rank = rank_of(comm);
  int size = static_cast<int>(text.size());
  if (rank == 0) {
    std::memcpy(buffer, &size, sizeof size);
    // A length-prefixed frame, not a C string: the receiver reads `size` bytes.
    // NOLINTNEXTLINE(bugprone-not-null-terminated-result)
    std::memcpy(buffer + sizeof size, text.data(), std::min(text.size(), kInline));
  }
  if (wait == Wait::Nap) {
    MPI_Request request = MPI_REQUEST_NULL;
    mpi_check(MPI_Ibcast(buffer, sizeof buffer, MPI_CHAR, 0, comm, &request), "MPI_Ibcast");
    wait_without_spinning(request);
  } else {
    mpi_check(MPI_Bcast(buffer, sizeof buffer, MPI_CHAR, 0, comm), "MPI_Bcast");
  }
  std::memcpy(&size, buffer, sizeof size);
  if (rank != 0)
    text.assign(buffer + sizeof size, std::min(static_cast<std::size_t>(size), kInline));
  if (static_cast<std::size_t>(size) <= kInline) return;
  text.resize(static_cast<std::size_t>(size));
  mpi_check(MPI_Bcast(text.data() + kInline, size - static_cast<int>(kInline), MPI_CHAR, 0, comm),
            "MPI_Bcast");
}

std::vector<std::string> allgather_hosts(const std::string& mine, MPI_Comm comm) {
  const int size = size_of(comm);
  char host[kHostChars] = {};
  std::strncpy(host, mine.c_str(), kHostChars - 1);
  std::vector<char> all(kHostChars * static_cast<std::size_t>(size));
  mpi_check(MPI_Allgather(host, kHostChars, MPI_CHAR, all.data(), kHostChars, MPI_CHAR, comm),
            "MPI_Allgather");
  std::vector<std::string> hosts;
  for (int r = 0; r < size; ++r)
    hosts.emplace_back(&all[kHostChars * static_cast<std::size_t>(r)]);
  return hosts;
}

std::pair<int, std::vector<std::string>> node_layout(MPI_Comm comm) {
  const Communicator local = Communicator::node_local(comm);
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  mpi_check(MPI_Get_processor_name(host, &length), "MPI_Get_processor_name");
  return {local.rank(), allgather_hosts(host, comm)};
}

}  // namespace slurmtune::trial
