// Probe for check_partition.py: reads cases from stdin and prints what
// core::partition_ranks makes of each, one line per case, so that the Python trial
// groups' partition (slurmtune.partition) can be compared with the C++ one.
//   in:  KIND COUNT GPUS_PER_NODE N  then N triples "rank node local_rank"
//   out: "groups 0,1;2,3 | <summary>"  or  "error <message>"
#include <iostream>
#include <string>

#include "core/error.hpp"
#include "core/placement/partition.hpp"

int main() {
  using slurmtune::core::TrialShape;
  std::string kind;
  int count = 0, gpus = 0, n = 0;
  while (std::cin >> kind >> count >> gpus >> n) {
    std::vector<slurmtune::core::RankPlacement> placements(static_cast<std::size_t>(n));
    for (auto& p : placements)
      std::cin >> p.rank >> p.node >> p.local_rank;
    const TrialShape shape{kind == "nodes"  ? TrialShape::Kind::NodesPerTrial
                           : kind == "gpus" ? TrialShape::Kind::GpusPerTrial
                                            : TrialShape::Kind::RanksPerTrial,
                           count, gpus};
    try {
      const auto partition = slurmtune::core::partition_ranks(placements, shape);
      std::string groups;
      for (const auto& g : partition.groups) {
        if (!groups.empty()) groups += ';';
        for (std::size_t i = 0; i < g.size(); ++i) {
          if (i) groups += ',';
          groups += std::to_string(g[i]);
        }
      }
      std::cout << "groups " << groups << " | " << partition.summary() << '\n';
    } catch (const slurmtune::Error& e) {
      std::cout << "error " << e.what() << '\n';
    }
  }
  return 0;
}
