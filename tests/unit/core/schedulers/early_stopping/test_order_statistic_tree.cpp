#define BOOST_TEST_MODULE core_order_statistic_tree
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <utility>
#include <vector>

#include "core/random.hpp"
#include "core/schedulers/early_stopping/order_statistic_tree.hpp"

using slurmtune::core::OrderStatisticTree;
using slurmtune::core::Xoshiro256;

namespace {
// Compares every query against a sorted vector after each batch of inserts.
template <class Key, class Draw>
void check_against_sorted_vector(std::size_t n, Draw draw) {
  OrderStatisticTree<Key> tree;
  std::vector<Key> reference;
  for (std::size_t i = 0; i < n; ++i) {
    const Key k = draw();
    tree.insert(k);
    reference.insert(std::upper_bound(reference.begin(), reference.end(), k), k);
    if (i % 997 == 0 || i + 1 == n) {
      BOOST_REQUIRE_EQUAL(tree.size(), reference.size());
      for (std::size_t r = 0; r < reference.size(); r += 1 + reference.size() / 50)
        BOOST_REQUIRE(tree.kth(r) == reference[r]);
      BOOST_REQUIRE(tree.kth(reference.size() - 1) == reference.back());
      for (int probe = 0; probe < 20; ++probe) {
        const Key q = draw();
        const auto lower = static_cast<std::size_t>(
            std::lower_bound(reference.begin(), reference.end(), q) - reference.begin());
        const auto upper = static_cast<std::size_t>(
            std::upper_bound(reference.begin(), reference.end(), q) - reference.begin());
        BOOST_REQUIRE_EQUAL(tree.count_less(q), lower);
        BOOST_REQUIRE_EQUAL(tree.count_less_equal(q), upper);
      }
    }
  }
}
}  // namespace

BOOST_AUTO_TEST_CASE(matches_a_sorted_vector_for_distinct_reals) {
  Xoshiro256 rng(1);
  check_against_sorted_vector<double>(30000, [&] { return rng.uniform01(); });
}

BOOST_AUTO_TEST_CASE(matches_a_sorted_vector_with_many_duplicates) {
  // Few distinct values: duplicates straddle leaf and inner-node splits.
  Xoshiro256 rng(2);
  check_against_sorted_vector<double>(30000, [&] { return static_cast<double>(rng.below(7)); });
}

BOOST_AUTO_TEST_CASE(matches_a_sorted_vector_for_ascending_and_descending_runs) {
  double next = 0;
  check_against_sorted_vector<double>(20000, [&] { return next += 1.0; });
  next = 0;
  check_against_sorted_vector<double>(20000, [&] { return next -= 1.0; });
}

BOOST_AUTO_TEST_CASE(orders_pair_keys_lexicographically) {
  Xoshiro256 rng(3);
  check_against_sorted_vector<std::pair<double, std::int64_t>>(10000, [&] {
    return std::pair<double, std::int64_t>{static_cast<double>(rng.below(50)),
                                           -static_cast<std::int64_t>(rng.below(1000))};
  });
}

BOOST_AUTO_TEST_CASE(keeps_infinities_in_order) {
  OrderStatisticTree<double> tree;
  for (const double v : {1.0, HUGE_VAL, -HUGE_VAL, 0.0})
    tree.insert(v);
  BOOST_TEST(tree.kth(0) == -HUGE_VAL);
  BOOST_TEST(tree.kth(3) == HUGE_VAL);
  BOOST_TEST(tree.count_less(HUGE_VAL) == 3U);
}

BOOST_AUTO_TEST_CASE(rejects_a_rank_beyond_the_size) {
  OrderStatisticTree<double> tree;
  BOOST_CHECK_THROW(tree.kth(0), slurmtune::UsageError);
  tree.insert(1.0);
  BOOST_CHECK_THROW(tree.kth(1), slurmtune::UsageError);
}
