#pragma once
// The few collectives the trial API builds its protocol from: a trial's description and
// errors reach every rank of a group as one broadcast string; hosts and node-local ranks
// are gathered once per trial. Every MPI call is checked (trial/communicator.hpp).
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

namespace slurmtune::trial {

/// How a rank waits in a broadcast: Spin (MPI's default) or Nap, for ranks that may
/// wait long for their group's next assignment (see wait_without_spinning).
enum class Wait { Spin, Nap };

/// Completes `request` without holding a core: tested back to back for 100 us, then
/// with naps doubling from 20 us to 1 ms.
void wait_without_spinning(MPI_Request& request);

/// Collective: rank 0's `text` on every rank of `comm`. One broadcast of 4 KiB for the
/// usual short text, a second only for the rest of a longer one.
void broadcast_string(std::string& text, MPI_Comm comm, Wait wait = Wait::Spin);

/// Collective: the host of every rank of `comm`, in rank order, given this rank's.
std::vector<std::string> allgather_hosts(const std::string& mine, MPI_Comm comm);

/// Collective: this rank's rank among the ranks of `comm` on its node, and the host of
/// every rank.
std::pair<int, std::vector<std::string>> node_layout(MPI_Comm comm);

}  // namespace slurmtune::trial
