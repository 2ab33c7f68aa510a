#define BOOST_TEST_MODULE core_partition
#include <boost/test/unit_test.hpp>
#include <set>

#include "core/error.hpp"
#include "core/placement/partition.hpp"
#include "core/random.hpp"

using namespace slurmtune;
using namespace slurmtune::core;
using Kind = TrialShape::Kind;

namespace {

// `per_node[i]` ranks on node i, numbered block-wise (as srun --ntasks-per-node does).
std::vector<RankPlacement> layout(const std::vector<int>& per_node) {
  std::vector<RankPlacement> out;
  int rank = 0;
  for (std::size_t node = 0; node < per_node.size(); ++node)
    for (int local = 0; local < per_node[node]; ++local)
      out.push_back({rank++, static_cast<int>(node), local});
  return out;
}

// Every property the partition promises, for any layout and shape.
void check_properties(const std::vector<RankPlacement>& placements, const TrialShape& shape,
                      const Partition& p) {
  std::vector<int> node_of(placements.size()), node_size;
  for (const auto& r : placements) {
    node_of[r.rank] = r.node;
    if (static_cast<int>(node_size.size()) <= r.node) node_size.resize(r.node + 1, 0);
    ++node_size[r.node];
  }
  std::set<int> used;
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    const auto& group = p.groups[g];
    std::set<int> nodes;
    for (const int rank : group) {
      BOOST_REQUIRE(used.insert(rank).second);  // no rank in two groups
      BOOST_REQUIRE(p.color[rank] == static_cast<int>(g));
      nodes.insert(node_of[rank]);
    }
    if (shape.kind == Kind::NodesPerTrial) {
      BOOST_REQUIRE(nodes.size() == static_cast<std::size_t>(shape.count));
      std::size_t whole = 0;
      for (const int n : nodes)
        whole += static_cast<std::size_t>(node_size[n]);
      BOOST_REQUIRE(group.size() == whole);  // all their ranks
    } else {
      BOOST_REQUIRE(group.size() == static_cast<std::size_t>(shape.count));
      if (nodes.size() > 1) {
        // Straddling only when no node could hold the group, and then over whole nodes
        // except the last one's tail.
        const int largest = *std::max_element(node_size.begin(), node_size.end());
        const int usable =
            shape.kind == Kind::GpusPerTrial ? std::min(largest, shape.gpus_per_node) : largest;
        BOOST_REQUIRE(shape.count > usable);
      }
    }
  }
  BOOST_REQUIRE(used.size() + p.idle.size() == placements.size());
  for (const int rank : p.idle)
    BOOST_REQUIRE(p.color[rank] == -1);
}

}  // namespace

BOOST_AUTO_TEST_CASE(nodes_per_trial_takes_whole_nodes_and_leaves_the_rest_idle) {
  const auto p = partition_ranks(layout({4, 4, 4, 4, 4}), {Kind::NodesPerTrial, 2, 0});
  BOOST_REQUIRE(p.groups.size() == 2u);
  const std::vector<int> first = {0, 1, 2, 3, 4, 5, 6, 7};
  BOOST_TEST(p.groups[0] == first, boost::test_tools::per_element());
  BOOST_TEST(p.idle.size() == 4u);
  BOOST_TEST(p.summary() == "2 group(s) of 8 rank(s), 4 rank(s) idle (16 17 18 19)");
}

BOOST_AUTO_TEST_CASE(small_trials_pack_inside_nodes_and_never_straddle) {
  // 3 ranks per trial on nodes of 4, 4 and 2 ranks: one group per 4-rank node.
  const auto p = partition_ranks(layout({4, 4, 2}), {Kind::RanksPerTrial, 3, 0});
  BOOST_REQUIRE(p.groups.size() == 2u);
  BOOST_TEST((p.groups[0] == std::vector<int>{0, 1, 2}));
  BOOST_TEST((p.groups[1] == std::vector<int>{4, 5, 6}));
  BOOST_TEST((p.idle == std::vector<int>{3, 7, 8, 9}));
}

BOOST_AUTO_TEST_CASE(trials_larger_than_a_node_take_whole_nodes) {
  const auto p = partition_ranks(layout({4, 4, 4, 4}), {Kind::RanksPerTrial, 6, 0});
  BOOST_REQUIRE(p.groups.size() == 2u);
  BOOST_TEST((p.groups[0] == std::vector<int>{0, 1, 2, 3, 4, 5}));
  BOOST_TEST((p.groups[1] == std::vector<int>{8, 9, 10, 11, 12, 13}));
  BOOST_TEST((p.idle == std::vector<int>{6, 7, 14, 15}));
}

BOOST_AUTO_TEST_CASE(gpu_trials_use_one_rank_per_gpu) {
  // 6 ranks per node, 4 GPUs each: local ranks 4 and 5 drive nothing.
  const auto p = partition_ranks(layout({6, 6}), {Kind::GpusPerTrial, 2, 4});
  BOOST_REQUIRE(p.groups.size() == 4u);
  BOOST_TEST((p.groups[3] == std::vector<int>{8, 9}));
  BOOST_TEST((p.idle == std::vector<int>{4, 5, 10, 11}));
  BOOST_CHECK_THROW(partition_ranks(layout({6}), {Kind::GpusPerTrial, 2, 0}), InputError);
}

BOOST_AUTO_TEST_CASE(round_robin_rank_numbering_is_grouped_by_node) {
  // srun -m cyclic: ranks 0,2 on node 0 and 1,3 on node 1.
  const std::vector<RankPlacement> cyclic = {{0, 0, 0}, {1, 1, 0}, {2, 0, 1}, {3, 1, 1}};
  const auto p = partition_ranks(cyclic, {Kind::RanksPerTrial, 2, 0});
  BOOST_TEST((p.groups[0] == std::vector<int>{0, 2}));
  BOOST_TEST((p.groups[1] == std::vector<int>{1, 3}));
}

BOOST_AUTO_TEST_CASE(impossible_shapes_and_bad_placements_are_refused) {
  try {
    partition_ranks(layout({2, 2}), {Kind::NodesPerTrial, 3, 0});
    BOOST_FAIL("3 nodes per trial from 2 nodes");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()) ==
               "cannot form one trial group of 3 node(s) per trial from 4 rank(s) on 2 node(s)");
  }
  BOOST_CHECK_THROW(partition_ranks(layout({2}), {Kind::RanksPerTrial, 0, 0}), InputError);
  BOOST_CHECK_THROW(partition_ranks({{0, 0, 0}, {0, 1, 0}}, {Kind::RanksPerTrial, 1, 0}),
                    InputError);
  BOOST_CHECK_THROW(partition_ranks({{0, 0, 0}, {5, 1, 0}}, {Kind::RanksPerTrial, 1, 0}),
                    InputError);
}

BOOST_AUTO_TEST_CASE(every_layout_from_1_to_4096_nodes_keeps_every_promise) {
  Xoshiro256 rng(20261122);
  std::vector<int> sizes;
  for (int n = 1; n <= 64; ++n)
    sizes.push_back(n);
  for (int n = 128; n <= 4096; n *= 2)
    sizes.push_back(n);
  std::size_t checked = 0;
  for (const int nodes : sizes) {
    for (const bool even : {true, false}) {
      std::vector<int> per_node(static_cast<std::size_t>(nodes));
      for (auto& k : per_node)
        k = even ? 8 : 1 + static_cast<int>(rng.next() % 8);  // uneven: 1..8 tasks per node
      const auto placements = layout(per_node);
      for (const TrialShape shape :
           {TrialShape{Kind::NodesPerTrial, 1, 0}, TrialShape{Kind::NodesPerTrial, 3, 0},
            TrialShape{Kind::RanksPerTrial, 1, 0}, TrialShape{Kind::RanksPerTrial, 3, 0},
            TrialShape{Kind::RanksPerTrial, 8, 0}, TrialShape{Kind::RanksPerTrial, 13, 0},
            TrialShape{Kind::GpusPerTrial, 2, 4}, TrialShape{Kind::GpusPerTrial, 6, 4}}) {
        Partition p;
        try {
          p = partition_ranks(placements, shape);
        } catch (const InputError&) {
          continue;  // nothing fits (e.g. 3 nodes per trial on 2 nodes): refused, fine
        }
        check_properties(placements, shape, p);
        BOOST_REQUIRE(partition_ranks(placements, shape).color == p.color);  // deterministic
        ++checked;
      }
    }
  }
  BOOST_TEST(checked > 1000u);
}
