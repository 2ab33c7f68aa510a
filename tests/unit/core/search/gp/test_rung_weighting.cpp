#define BOOST_TEST_MODULE core_rung_weighting
#include <boost/test/unit_test.hpp>
#include <vector>

#include "core/error.hpp"
#include "core/search/gp/rung_weighting.hpp"

using namespace slurmtune::core;

BOOST_AUTO_TEST_CASE(concordance_counts_pairs_ordered_alike) {
  const std::vector<double> a = {1, 2, 3, 4};
  BOOST_TEST(concordance(a, std::vector<double>{10, 20, 30, 40}) == 1.0);
  BOOST_TEST(concordance(a, std::vector<double>{4, 3, 2, 1}) == 0.0);
  // One of six pairs swapped (3 and 4); a tie counts half.
  BOOST_TEST(concordance(a, std::vector<double>{1, 2, 4, 3}) == 5.0 / 6);
  BOOST_TEST(concordance(std::vector<double>{1, 2}, std::vector<double>{5, 5}) == 0.5);
  BOOST_CHECK_THROW(concordance(a, std::vector<double>{1, 2}), slurmtune::UsageError);
  BOOST_CHECK_THROW(concordance(std::vector<double>{1}, std::vector<double>{1}),
                    slurmtune::UsageError);
}

BOOST_AUTO_TEST_CASE(weights_follow_agreement_above_chance) {
  // Rung 1 agrees 0.75 (tau 0.5), rung 3 0.95 (tau 0.9), rung 9 at chance, rung 27 unknown.
  const auto w = rung_weights({{1, 0.75}, {3, 0.95}, {9, 0.5}, {27, std::nullopt}}, 1);
  BOOST_REQUIRE_EQUAL(w.size(), 2U);
  BOOST_TEST(w.at(1) == 0.5 / 1.4, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(w.at(3) == 0.9 / 1.4, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(no_rung_better_than_chance_falls_back_to_the_first) {
  const auto w = rung_weights({{3, 0.4}, {9, std::nullopt}}, 1);
  BOOST_REQUIRE_EQUAL(w.size(), 1U);
  BOOST_TEST(w.at(1) == 1.0);
  BOOST_TEST(rung_weights({}, 2).at(2) == 1.0);
}
