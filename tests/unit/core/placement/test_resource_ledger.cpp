#define BOOST_TEST_MODULE core_resource_ledger
#include <boost/test/unit_test.hpp>
#include <set>

#include "core/error.hpp"
#include "core/placement/resource_ledger.hpp"

using namespace slurmtune;
using namespace slurmtune::core;

namespace {
std::vector<NodeCapacity> nodes(std::initializer_list<std::int64_t> cpus, std::int64_t gpus = 0) {
  std::vector<NodeCapacity> out;
  int i = 1;
  for (const auto c : cpus) {
    std::string name = "n";
    name += std::to_string(i++);
    out.push_back({name, c, gpus});
  }
  return out;
}
}  // namespace

BOOST_AUTO_TEST_CASE(single_node_trials_fill_the_fullest_node_first) {
  ResourceLedger ledger(nodes({4, 4}));
  const SlotRequest one{1, 2, 0};
  const auto a = ledger.acquire(one);
  const auto b = ledger.acquire(one);
  BOOST_REQUIRE(a && b);
  BOOST_TEST(a->front() == b->front());  // packed: the other node stays whole
  const auto two_nodes = ledger.acquire(SlotRequest{1, 4, 0});
  BOOST_REQUIRE(two_nodes);
  BOOST_TEST(two_nodes->front() != a->front());
  BOOST_TEST(!ledger.acquire(one));
  ledger.release(*a, one);
  BOOST_TEST(ledger.acquire(one).has_value());
}

BOOST_AUTO_TEST_CASE(a_trial_can_be_placed_on_one_named_node_while_it_has_room) {
  ResourceLedger ledger({{"a", 2, 0}, {"b", 1, 0}});
  const SlotRequest one{1, 1, 0};
  BOOST_TEST((ledger.acquire_on(1, one) == std::vector<std::size_t>{1}));
  BOOST_TEST(!ledger.acquire_on(1, one).has_value());  // full
  BOOST_TEST(!ledger.acquire_on(7, one).has_value());  // no such node
  ledger.set_usable(0, false);
  BOOST_TEST(!ledger.acquire_on(0, one).has_value());  // its worker is not connected
  ledger.set_usable(0, true);
  BOOST_TEST((ledger.acquire_on(0, one) == std::vector<std::size_t>{0}));
  ledger.release({1}, one);
  BOOST_TEST((ledger.acquire_on(1, one) == std::vector<std::size_t>{1}));
  BOOST_CHECK_THROW(ledger.acquire_on(0, SlotRequest{2, 1, 0}), UsageError);
}

BOOST_AUTO_TEST_CASE(multi_node_trials_get_disjoint_nodes_until_none_are_left) {
  ResourceLedger ledger(nodes({4, 4, 4, 4}));
  const SlotRequest request{2, 4, 0};
  BOOST_TEST(ledger.capacity(request) == 2u);
  const auto a = ledger.acquire(request), b = ledger.acquire(request);
  BOOST_REQUIRE(a && b);
  std::set<std::size_t> used(a->begin(), a->end());
  used.insert(b->begin(), b->end());
  BOOST_TEST(used.size() == 4u);
  BOOST_TEST(!ledger.acquire(request));
  BOOST_TEST(ledger.hostlist(*a) == "n[1-2]");
}

BOOST_AUTO_TEST_CASE(gpus_limit_placement_like_cpus) {
  ResourceLedger ledger(nodes({64, 64}, 4));
  const SlotRequest request{1, 8, 2};
  BOOST_TEST(ledger.capacity(request) == 4u);
  for (int i = 0; i < 4; ++i)
    BOOST_TEST(ledger.acquire(request).has_value());
  BOOST_TEST(!ledger.acquire(request));
}

BOOST_AUTO_TEST_CASE(capacity_counts_uneven_nodes) {
  ResourceLedger ledger(nodes({8, 4, 2, 1}));
  BOOST_TEST(ledger.capacity(SlotRequest{1, 2, 0}) == 7u);
  BOOST_TEST(ledger.capacity(SlotRequest{2, 2, 0}) == 3u);  // 4+2+1 slices, pairs on distinct nodes
  BOOST_TEST(ledger.capacity(SlotRequest{3, 2, 0}) == 1u);
}

BOOST_AUTO_TEST_CASE(impossible_shapes_are_refused_with_the_reason) {
  ResourceLedger ledger(nodes({4, 4}));
  try {
    ledger.check_fits(SlotRequest{3, 1, 0});
    BOOST_FAIL("3 nodes fitted in 2");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()).find("allocation has 2 node(s)") != std::string::npos);
  }
  try {
    ledger.check_fits(SlotRequest{1, 8, 0});
    BOOST_FAIL("8 CPUs fitted in 4");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()).find("largest node: n1 with 4 CPU(s)") != std::string::npos);
  }
  BOOST_CHECK_NO_THROW(ledger.check_fits(SlotRequest{2, 4, 0}));
}

BOOST_AUTO_TEST_CASE(releasing_twice_is_a_usage_error) {
  ResourceLedger ledger(nodes({2}));
  const SlotRequest one{1, 2, 0};
  const auto a = ledger.acquire(one);
  ledger.release(*a, one);
  BOOST_CHECK_THROW(ledger.release(*a, one), UsageError);
}

BOOST_AUTO_TEST_CASE(unusable_nodes_get_no_trials_until_usable_again) {
  core::ResourceLedger ledger({{"n1", 4, 0}, {"n2", 4, 0}});
  const core::SlotRequest one{1, 4, 0};
  ledger.set_usable(0, false);
  const auto first = ledger.acquire(one);
  BOOST_REQUIRE(first);
  BOOST_TEST((*first == std::vector<std::size_t>{1}));
  BOOST_TEST(!ledger.acquire(one));
  ledger.set_usable(0, true);
  BOOST_TEST((*ledger.acquire(one) == std::vector<std::size_t>{0}));
  BOOST_TEST(ledger.capacity(one) == 2u);  // the study's shape is judged on the whole allocation
  BOOST_CHECK_THROW(ledger.set_usable(2, true), UsageError);
}

// `slurmtune join`: nodes of another job are added while the study runs; a multi-node
// trial gets all its nodes from one job, never some of each.
BOOST_AUTO_TEST_CASE(added_nodes_take_trials_and_a_trial_never_spans_allocations) {
  core::ResourceLedger ledger({{"n1", 4, 0}});
  const core::SlotRequest pair{2, 4, 0}, one{1, 4, 0};
  BOOST_TEST(!ledger.acquire(pair));  // one node of its own
  const auto n2 = ledger.add_node({"n2", 4, 0, "77"});
  BOOST_TEST(n2 == 1u);
  BOOST_TEST(!ledger.acquire(pair));  // n1 and n2 are in different jobs
  ledger.add_node({"n3", 4, 0, "77"});
  BOOST_TEST((*ledger.acquire(pair) == std::vector<std::size_t>{1, 2}));
  BOOST_TEST((*ledger.acquire(one) == std::vector<std::size_t>{0}));
  BOOST_TEST(!ledger.acquire(one));
  ledger.release({1, 2}, pair);
  ledger.set_usable(2, false);  // job 77 is leaving
  BOOST_TEST(!ledger.acquire(pair));
  BOOST_TEST((*ledger.acquire(one) == std::vector<std::size_t>{1}));
  BOOST_TEST(ledger.hostlist({1}) == "n2");
  BOOST_TEST(core::ResourceLedger::holds({"n9", 2, 0, "78"}, one) == false);
  BOOST_TEST(core::ResourceLedger::holds({"n9", 4, 1, "78"}, one) == true);
}

BOOST_AUTO_TEST_CASE(a_multi_node_trial_takes_the_first_allocation_with_room) {
  core::ResourceLedger ledger({{"a1", 8, 0, ""}, {"b1", 8, 0, "5"}, {"a2", 8, 0, ""}});
  ledger.add_node({"b2", 8, 0, "5"});
  const core::SlotRequest pair{2, 8, 0};
  BOOST_TEST((*ledger.acquire(pair) == std::vector<std::size_t>{0, 2}));
  BOOST_TEST((*ledger.acquire(pair) == std::vector<std::size_t>{1, 3}));
  BOOST_TEST(!ledger.acquire(pair));
}

// The one-node best fit comes from an index by free GPUs and CPUs: it must choose what a
// pass over every node chooses (the fewest free CPUs that hold the trial, the lowest
// index of equals) through any mix of launches, releases, nodes leaving and joining.
BOOST_AUTO_TEST_CASE(the_indexed_best_fit_chooses_what_a_pass_over_every_node_would) {
  std::vector<core::NodeCapacity> nodes;
  for (std::size_t i = 0; i < 40; ++i)
    nodes.push_back(
        {"", static_cast<std::int64_t>(8 + 8 * (i % 4)), static_cast<std::int64_t>(i % 3), ""});
  core::ResourceLedger ledger(nodes);
  std::vector<bool> usable(nodes.size(), true);
  const std::vector<core::SlotRequest> shapes{{1, 1, 0}, {1, 4, 1}, {1, 8, 0}, {1, 2, 2}};
  std::vector<std::pair<std::size_t, core::SlotRequest>> held;
  std::uint64_t state = 12345;
  const auto next = [&state](std::uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>((state >> 33) % n);
  };
  std::size_t placed = 0;
  for (int round = 0; round < 4000; ++round) {
    const std::size_t what = next(10);
    if (what < 6) {
      const core::SlotRequest& shape = shapes[next(shapes.size())];
      std::optional<std::size_t> expected;
      for (std::size_t i = 0; i < nodes.size(); ++i)
        if (usable[i] && ledger.free_cpus(i) >= shape.cpus_per_node &&
            ledger.free_gpus(i) >= shape.gpus_per_node &&
            (!expected || ledger.free_cpus(i) < ledger.free_cpus(*expected)))
          expected = i;
      const auto got = ledger.acquire(shape);
      BOOST_TEST_REQUIRE(got.has_value() == expected.has_value());
      if (!got) continue;
      BOOST_TEST_REQUIRE(got->front() == *expected);
      held.emplace_back(got->front(), shape);
      ++placed;
    } else if (what < 9 && !held.empty()) {
      const std::size_t k = next(held.size());
      ledger.release({held[k].first}, held[k].second);
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (what == 9) {
      const std::size_t node = next(nodes.size() + 1);
      if (node == nodes.size()) {
        nodes.push_back({"", 16, 1, "9"});
        usable.push_back(true);
        BOOST_TEST(ledger.add_node(nodes.back()) == nodes.size() - 1);
      } else {
        usable[node] = !usable[node];
        ledger.set_usable(node, usable[node]);
      }
    }
  }
  BOOST_TEST(placed > 1000u);
}
