#include "core/placement/partition.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"

namespace slurmtune::core {
namespace {

using NodeRanks = std::vector<std::vector<int>>;  // world ranks of each node, by local rank

NodeRanks ranks_by_node(const std::vector<RankPlacement>& placements) {
  std::vector<bool> seen(placements.size(), false);
  std::map<int, std::vector<std::pair<int, int>>> nodes;  // node -> (local rank, rank)
  for (const auto& p : placements) {
    if (p.rank < 0 || static_cast<std::size_t>(p.rank) >= placements.size() || seen[p.rank])
      throw InputError("rank placements: rank " + std::to_string(p.rank) + " is " +
                       (p.rank < 0 || static_cast<std::size_t>(p.rank) >= placements.size()
                            ? "out of range"
                            : "listed twice") +
                       " among " + std::to_string(placements.size()) + " ranks");
    seen[p.rank] = true;
    nodes[p.node].emplace_back(p.local_rank, p.rank);
  }
  NodeRanks out;
  for (auto& [node, ranks] : nodes) {
    std::sort(ranks.begin(), ranks.end());
    std::vector<int> world;
    for (const auto& [local, rank] : ranks)
      world.push_back(rank);
    out.push_back(std::move(world));
  }
  return out;
}

// Groups of `size` ranks: packed inside each node when a node can hold one, otherwise
// made of consecutive whole nodes.
std::vector<std::vector<int>> groups_of(const NodeRanks& nodes, std::size_t size) {
  std::vector<std::vector<int>> groups;
  std::size_t largest = 0;
  for (const auto& n : nodes)
    largest = std::max(largest, n.size());
  if (size <= largest) {
    for (const auto& n : nodes)
      for (std::size_t first = 0; first + size <= n.size(); first += size)
        groups.emplace_back(n.begin() + static_cast<std::ptrdiff_t>(first),
                            n.begin() + static_cast<std::ptrdiff_t>(first + size));
    return groups;
  }
  std::vector<int> current;
  for (const auto& n : nodes) {
    current.insert(current.end(), n.begin(), n.end());
    if (current.size() >= size) {
      current.resize(size);  // the rest of this node stays idle: no two groups share it
      groups.push_back(std::move(current));
      current.clear();
    }
  }
  return groups;
}

}  // namespace

std::string describe(const TrialShape& shape) {
  switch (shape.kind) {
    case TrialShape::Kind::NodesPerTrial:
      return std::to_string(shape.count) + " node(s) per trial";
    case TrialShape::Kind::RanksPerTrial:
      return std::to_string(shape.count) + " rank(s) per trial";
    case TrialShape::Kind::GpusPerTrial:
      return std::to_string(shape.count) + " GPU(s) per trial (" +
             std::to_string(shape.gpus_per_node) + " per node)";
  }
  return "?";
}

std::string Partition::summary() const {
  std::size_t smallest = SIZE_MAX, largest = 0;
  for (const auto& g : groups) {
    smallest = std::min(smallest, g.size());
    largest = std::max(largest, g.size());
  }
  // Built with += only: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string text = std::to_string(groups.size());
  text += " group(s) of ";
  if (smallest != largest) {
    text += std::to_string(smallest);
    text += '-';
  }
  text += std::to_string(largest);
  text += " rank(s)";
  if (idle.empty()) return text;
  text += ", ";
  text += std::to_string(idle.size());
  text += " rank(s) idle (";
  for (std::size_t i = 0; i < idle.size() && i < 8; ++i) {
    if (i) text += ' ';
    text += std::to_string(idle[i]);
  }
  text += idle.size() > 8 ? " ...)" : ")";
  return text;
}

Partition partition_ranks(const std::vector<RankPlacement>& placements, const TrialShape& shape) {
  if (shape.count < 1) throw InputError(describe(shape) + ": the count must be at least 1");
  NodeRanks nodes = ranks_by_node(placements);
  Partition p;
  switch (shape.kind) {
    case TrialShape::Kind::NodesPerTrial:
      for (std::size_t first = 0; first + static_cast<std::size_t>(shape.count) <= nodes.size();
           first += static_cast<std::size_t>(shape.count)) {
        std::vector<int> group;
        for (std::size_t n = first; n < first + static_cast<std::size_t>(shape.count); ++n)
          group.insert(group.end(), nodes[n].begin(), nodes[n].end());
        p.groups.push_back(std::move(group));
      }
      break;
    case TrialShape::Kind::GpusPerTrial:
      if (shape.gpus_per_node < 1)
        throw InputError(describe(shape) + ": the nodes have no GPUs (gpus_per_node = 0)");
      // One rank drives one GPU: ranks beyond the node's GPU count have nothing to drive.
      for (auto& n : nodes)
        n.resize(std::min(n.size(), static_cast<std::size_t>(shape.gpus_per_node)));
      [[fallthrough]];
    case TrialShape::Kind::RanksPerTrial:
      p.groups = groups_of(nodes, static_cast<std::size_t>(shape.count));
      break;
  }
  if (p.groups.empty())
    throw InputError("cannot form one trial group of " + describe(shape) + " from " +
                     std::to_string(placements.size()) + " rank(s) on " +
                     std::to_string(ranks_by_node(placements).size()) + " node(s)");
  p.color.assign(placements.size(), -1);
  for (std::size_t g = 0; g < p.groups.size(); ++g)
    for (const int rank : p.groups[g])
      p.color[static_cast<std::size_t>(rank)] = static_cast<int>(g);
  for (std::size_t r = 0; r < p.color.size(); ++r)
    if (p.color[r] < 0) p.idle.push_back(static_cast<int>(r));
  return p;
}

}  // namespace slurmtune::core
