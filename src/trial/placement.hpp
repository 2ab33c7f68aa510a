#pragma once
// Where this rank runs: its node within the step and its rank on that node. PMIx
// answers directly (PMIX_NODEID, PMIX_LOCAL_RANK, PMIX_HOSTNAME, asked with
// PMIX_OPTIONAL so a missing key fails fast); without PMIx (built without it, or a
// launcher that lacks the keys) MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) stands in;
// SLURMTUNE_PLACEMENT=mpi forces that fallback.
#include <mpi.h>

#include <string>

namespace slurmtune::trial {

/// Where this rank found itself: its node within the step, its rank on that node and
/// its host (the step-wide view, one per rank, is core::RankPlacement).
struct RankLocation {
  int node = 0;
  int local_rank = 0;
  std::string host;
  const char* source = "";  ///< "pmix" or "mpi-shared" (for the log)
};

/// Collective over `world` (every rank must call it).
RankLocation query_placement(MPI_Comm world);

}  // namespace slurmtune::trial
