#define BOOST_TEST_MODULE core_numpy_compat
#include <boost/test/unit_test.hpp>
#include <limits>
#include <vector>

#include "core/search/optuna/numpy_compat.hpp"

using namespace slurmtune::core;

// Expected values printed by Debian's numpy 1.24 (python3-numpy):
//   np.random.RandomState(42).random_sample(3), .uniform(-2.5, 7.0, 3), ...

BOOST_AUTO_TEST_CASE(random_sample_matches_numpy) {
  NumpyRandomState r(42);
  BOOST_TEST(r.random_sample() == 0.3745401188473625);
  BOOST_TEST(r.random_sample() == 0.9507143064099162);
  BOOST_TEST(r.random_sample() == 0.7319939418114051);
  NumpyRandomState top(4294967295u);
  BOOST_TEST(top.random_sample() == 0.0976320289940138);
}

BOOST_AUTO_TEST_CASE(uniform_randint_and_choice_match_numpy) {
  NumpyRandomState u(42);
  BOOST_TEST(u.uniform(-2.5, 7.0) == 1.0581311290499436);
  BOOST_TEST(u.uniform(-2.5, 7.0) == 6.531785910894204);
  BOOST_TEST(u.uniform(-2.5, 7.0) == 4.453942447208348);

  NumpyRandomState r(7);  // randint(0, 5, 6), then randint(3, 1000, 4)
  const std::vector<std::int64_t> small{4, 1, 3, 3, 4, 1}, large{401, 538, 587, 348};
  for (const auto v : small)
    BOOST_TEST(r.randint(0, 5) == v);
  for (const auto v : large)
    BOOST_TEST(r.randint(3, 1000) == v);

  NumpyRandomState c(123);  // choice(5, 8, p=[0.1, 0.2, 0.3, 0.15, 0.25])
  const std::vector<double> p{0.1, 0.2, 0.3, 0.15, 0.25};
  const std::vector<std::size_t> expected{3, 1, 1, 2, 3, 2, 4, 3};
  BOOST_TEST(c.choice(p, 8) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(sums_round_as_numpy_sums) {
  std::vector<double> x;
  for (int i = 1; i < 300; ++i)
    x.push_back(i / 7.0);
  BOOST_TEST(numpy_sum(x) == 6407.142857142858);
  BOOST_TEST(numpy_sum(std::span(x).first(100)) == 721.4285714285714);
  BOOST_TEST(numpy_sum(std::span(x).first(5)) == 2.142857142857143);
}

BOOST_AUTO_TEST_CASE(argsort_orders_ties_and_nans_as_numpy_does) {
  // np.argsort of these (numpy 1.24): ties come out in quicksort's order, NaN last.
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> ties{2.0, 3.0, 0.0, kNaN, 1.0, 2.0, 2.0, 1.0,  3.0, 0.0,
                                 1.0, 1.0, 2.0, 1.0,  0.0, 0.0, 0.0, kNaN, 0.0, 3.0,
                                 0.0, 2.0, 3.0, 0.0,  1.0, 1.0, 1.0, 3.0,  0.0, 3.0,
                                 3.0, 3.0, 0.0, 1.0,  2.0, 1.0, 2.0, 2.0,  2.0, 0.0};
  const std::vector<std::size_t> ties_order{39, 20, 18, 28, 16, 15, 14, 32, 9,  23, 2,  10, 24, 7,
                                            13, 35, 4,  26, 25, 33, 11, 34, 36, 37, 0,  21, 38, 12,
                                            6,  5,  27, 29, 30, 31, 8,  1,  22, 19, 17, 3};
  BOOST_TEST(numpy_argsort(ties) == ties_order, boost::test_tools::per_element());
  const std::vector<double> reals{-0.7, 0.6,  -0.1, -0.6, 0.4,  0.8,  -1.6, -0.3, -1.0,
                                  -0.2, -1.3, 0.0,  -0.0, -0.3, -1.0, -0.4, -1.1, -1.4,
                                  0.2,  -1.1, 1.2,  0.7,  -2.0, 0.3,  -1.1};
  const std::vector<std::size_t> reals_order{22, 6, 17, 10, 24, 19, 16, 14, 8, 0,  3, 15, 7,
                                             13, 9, 2,  11, 12, 18, 23, 4,  1, 21, 5, 20};
  BOOST_TEST(numpy_argsort(reals) == reals_order, boost::test_tools::per_element());
}
