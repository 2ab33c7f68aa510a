#pragma once
// Splitting one job step's ranks into per-trial groups (MPI sub-communicators). Each
// rank's placement (its node and its rank on that node, from PMIx or from
// MPI_Comm_split_type) plus the trial's shape decide which ranks form which group:
//   - a group never straddles nodes unless one trial needs more than a node holds; then
//     it takes whole nodes (and the unused tail of its last node stays idle);
//   - a trial smaller than a node packs several groups onto that node;
//   - ranks that complete no group are idle (reported, never given work).
// Pure and deterministic: every rank computes the same partition from the same inputs.
#include <string>
#include <vector>

namespace slurmtune::core {

/// Where one rank of the step runs.
struct RankPlacement {
  int rank = 0;        ///< rank in the step's world communicator
  int node = 0;        ///< node index within the step (PMIX_NODEID)
  int local_rank = 0;  ///< rank among the ranks on its node (PMIX_LOCAL_RANK)
};

/// How big one trial is.
struct TrialShape {
  enum class Kind {
    NodesPerTrial,  ///< whole nodes, all their ranks
    RanksPerTrial,  ///< a number of ranks
    GpusPerTrial,   ///< one rank per GPU: `count` GPUs, `gpus_per_node` on each node
  };
  Kind kind = Kind::RanksPerTrial;
  int count = 1;
  int gpus_per_node = 0;
};
std::string describe(const TrialShape& shape);

struct Partition {
  std::vector<std::vector<int>> groups;  ///< world ranks of each group, in node order
  std::vector<int> color;                ///< per world rank: its group, or -1 (idle)
  std::vector<int> idle;                 ///< idle world ranks, ascending
  /// "4 groups of 2 ranks on 4 nodes, 1 rank idle (7)"
  std::string summary() const;
};

/// Throws InputError when the placements are inconsistent (ranks missing or repeated)
/// or when not even one group fits, saying why.
Partition partition_ranks(const std::vector<RankPlacement>& placements, const TrialShape& shape);

}  // namespace slurmtune::core
