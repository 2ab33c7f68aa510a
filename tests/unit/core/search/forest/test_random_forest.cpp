#define BOOST_TEST_MODULE core_random_forest
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/search/forest/random_forest.hpp"

// The random forest MOBSTER may use as its surrogate (surrogate = "random-forest").
using namespace slurmtune::core;

namespace {

// y = 1 where x0 > 0.5, else 0, plus noise; x1 explains nothing.
forest::TrainingSet step_in_first_input(std::size_t n, std::uint64_t seed, double noise) {
  Xoshiro256 rng(seed);
  forest::TrainingSet data;
  data.dims = 2;
  for (std::size_t i = 0; i < n; ++i) {
    const double x0 = rng.uniform01(), x1 = rng.uniform01();
    data.inputs.insert(data.inputs.end(), {x0, x1});
    data.targets.push_back((x0 > 0.5 ? 1.0 : 0.0) + noise * (rng.uniform01() - 0.5));
  }
  return data;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_forest_learns_a_step_and_ignores_the_other_input) {
  const forest::RandomForest f(step_in_first_input(80, 1, 0.1), {}, 7);
  for (const double x1 : {0.05, 0.5, 0.95}) {
    const std::vector<double> points{0.2, x1, 0.8, x1};
    const auto p = f.predict(points);
    BOOST_TEST(std::fabs(p[0].mean) < 0.1);
    BOOST_TEST(std::fabs(p[1].mean - 1.0) < 0.1);
  }
}

BOOST_AUTO_TEST_CASE(the_trees_disagree_near_the_step_and_agree_away_from_it) {
  const forest::RandomForest f(step_in_first_input(60, 2, 0.0), {}, 3);
  const std::vector<double> points{0.5, 0.5, 0.1, 0.5};
  const auto p = f.predict(points);
  BOOST_TEST(p[0].variance > 10 * p[1].variance);
  // Where every tree agrees the variance is the floor, not 0: expected improvement stays defined.
  BOOST_TEST(p[1].variance > 0);
}

BOOST_AUTO_TEST_CASE(a_forest_is_a_function_of_its_data_and_seed) {
  const auto data = step_in_first_input(50, 3, 0.3);
  const forest::RandomForest a(data, {}, 11), b(data, {}, 11), c(data, {}, 12);
  Xoshiro256 rng(4);
  std::vector<double> points;
  for (int k = 0; k < 200; ++k)
    points.push_back(rng.uniform01());
  const auto pa = a.predict(points), pb = b.predict(points), pc = c.predict(points);
  bool differs = false;
  for (std::size_t k = 0; k < pa.size(); ++k) {
    BOOST_TEST(pa[k].mean == pb[k].mean);
    BOOST_TEST(pa[k].variance == pb[k].variance);
    differs = differs || pa[k].mean != pc[k].mean;
  }
  BOOST_TEST(differs);
}

// Out of bag: an observation's leave-one-out mean comes from the trees that did not see
// it, so a noisy observation is not explained by itself (a tree's leaf of three holds it).
BOOST_AUTO_TEST_CASE(leave_one_out_means_come_from_the_trees_that_did_not_see_the_row) {
  auto data = step_in_first_input(60, 5, 0.0);
  data.targets[0] += 5.0;  // an outlier
  const forest::RandomForest f(data, {}, 9);
  const std::vector<std::size_t> rows{0, 1, 2};
  const auto loo = f.leave_one_out_means(rows);
  const auto fitted = f.predict(data.row(0));
  // The outlier pulls its own in-bag trees' leaves up; the trees without it do not see it.
  BOOST_TEST(loo[0] < fitted[0].mean - 0.2);
  for (std::size_t k = 1; k < 3; ++k)
    BOOST_TEST(std::fabs(loo[k] - (data.inputs[k * 2] > 0.5 ? 1.0 : 0.0)) < 0.5);
  BOOST_CHECK_THROW(f.leave_one_out_means(std::vector<std::size_t>{60}), slurmtune::UsageError);
}

BOOST_AUTO_TEST_CASE(an_empty_or_ragged_training_set_is_refused) {
  forest::TrainingSet empty;
  empty.dims = 2;
  BOOST_CHECK_THROW(forest::RandomForest(empty, {}, 1), slurmtune::UsageError);
  forest::TrainingSet ragged = step_in_first_input(5, 1, 0.0);
  ragged.inputs.pop_back();
  BOOST_CHECK_THROW(forest::RandomForest(ragged, {}, 1), slurmtune::UsageError);
  const forest::RandomForest one(step_in_first_input(1, 1, 0.0), {}, 1);
  BOOST_CHECK_THROW(one.predict(std::vector<double>{0.5}), slurmtune::UsageError);
}
