#define BOOST_TEST_MODULE core_gaussian_process
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/search/gp/gaussian_process.hpp"

using namespace slurmtune::core;

namespace {

// y = sin(6 x0) + noise, with x1 irrelevant: n points in the unit square.
gp::Data relevant_and_irrelevant(std::size_t n, std::uint64_t seed) {
  Xoshiro256 rng(seed);
  gp::Data data;
  data.dims = 2;
  for (std::size_t i = 0; i < n; ++i) {
    const double x0 = rng.uniform01(), x1 = rng.uniform01();
    data.inputs.insert(data.inputs.end(), {x0, x1});
    data.targets.push_back(std::sin(6 * x0) + 0.05 * (rng.uniform01() - 0.5));
  }
  return data;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_fit_raises_the_objective_and_finds_the_irrelevant_input) {
  const auto data = relevant_and_irrelevant(40, 1);
  const auto start = gp::default_hyperparameters(2);
  const auto fitted = gp::fit(data, start, {});
  BOOST_TEST(gp::fit_objective(data, fitted).value > gp::fit_objective(data, start).value + 5);
  // x1 explains nothing: its length scale grows far beyond x0's.
  BOOST_TEST(fitted.length_scales[1] > 4 * fitted.length_scales[0]);
  BOOST_TEST(fitted.noise_variance < 0.01);
  // Deterministic: the same data and start give the same hyperparameters.
  BOOST_TEST((gp::fit(data, start, {}) == fitted));
}

BOOST_AUTO_TEST_CASE(the_posterior_interpolates_and_is_unsure_far_away) {
  const auto data = relevant_and_irrelevant(30, 2);
  const gp::Hyperparameters h{1.0, {0.3, 5.0}, 1e-4};
  const gp::Posterior posterior(data, h);
  const auto at_data = posterior.predict(data.row(3));
  BOOST_TEST(std::fabs(at_data[0].mean - data.targets[3]) < 0.05);
  BOOST_TEST(at_data[0].variance < 1e-3);
  const std::vector<double> far{40.0, 40.0};
  const auto away = posterior.predict(far);
  BOOST_TEST(std::fabs(away[0].mean) < 1e-6);
  BOOST_TEST(std::fabs(away[0].variance - 1.0) < 1e-6);
}

BOOST_AUTO_TEST_CASE(repeated_inputs_without_noise_are_factorised_with_jitter) {
  gp::Data data;
  data.dims = 1;
  data.inputs = {0.5, 0.5, 0.5, 0.2};
  data.targets = {1.0, 1.0, 1.0, 0.0};
  const gp::Hyperparameters h{1.0, {0.5}, 1e-12};
  const gp::Posterior posterior(data, h);
  const std::vector<double> point{0.5};
  BOOST_TEST(std::fabs(posterior.predict(point)[0].mean - 1.0) < 1e-3);
}

BOOST_AUTO_TEST_CASE(mismatched_shapes_are_refused) {
  gp::Data data;
  data.dims = 2;
  data.inputs = {0.1, 0.2, 0.3};
  data.targets = {1.0, 2.0};
  BOOST_CHECK_THROW(gp::Posterior(data, gp::default_hyperparameters(2)), slurmtune::UsageError);
  data.inputs.push_back(0.4);
  BOOST_CHECK_THROW(gp::Posterior(data, gp::default_hyperparameters(3)), slurmtune::UsageError);
}

// Leave-one-out in closed form against the posterior conditioned without that row.
BOOST_AUTO_TEST_CASE(leave_one_out_means_equal_conditioning_without_the_row) {
  const auto data = relevant_and_irrelevant(25, 3);
  const auto h = gp::fit(data, gp::default_hyperparameters(2), {});
  const gp::Posterior posterior(data, h);
  const std::vector<std::size_t> rows = {0, 7, 24};
  const auto loo = posterior.leave_one_out_means(rows);
  BOOST_REQUIRE_EQUAL(loo.size(), rows.size());
  for (std::size_t j = 0; j < rows.size(); ++j) {
    gp::Data without;
    without.dims = 2;
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (i == rows[j]) continue;
      const auto r = data.row(i);
      without.inputs.insert(without.inputs.end(), r.begin(), r.end());
      without.targets.push_back(data.targets[i]);
    }
    const auto row = data.row(rows[j]);
    const auto direct =
        gp::Posterior(without, h).predict(std::vector<double>(row.begin(), row.end()));
    BOOST_TEST(loo[j] == direct[0].mean, boost::test_tools::tolerance(1e-7));
  }
  BOOST_CHECK_THROW(posterior.leave_one_out_means(std::vector<std::size_t>{25}), slurmtune::Error);
}

// A smooth function of 16 inputs seen at 30 points: the fixed prior expects half-range
// length scales, the dimension-scaled one lengths near exp(sqrt 2 + log(16) / 2) = 16.4.
BOOST_AUTO_TEST_CASE(the_dimension_scaled_prior_expects_longer_length_scales_in_many_dimensions) {
  constexpr std::size_t kDims = 16;
  const auto scaled = gp::LengthScalePrior::DimensionScaled;
  BOOST_TEST(gp::default_hyperparameters(kDims, scaled).length_scales[0] ==
                 std::exp(std::sqrt(2.0) + 0.5 * std::log(16.0)),
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST((gp::default_hyperparameters(kDims) ==
              gp::Hyperparameters{1.0, std::vector<double>(kDims, 0.5), 1e-2}));
  // One input: exp(sqrt 2), still longer than the fixed prior's 0.5.
  BOOST_TEST(gp::default_hyperparameters(1, scaled).length_scales[0] == std::exp(std::sqrt(2.0)),
             boost::test_tools::tolerance(1e-12));
  Xoshiro256 rng(7);
  gp::Data data;
  data.dims = kDims;
  for (std::size_t i = 0; i < 30; ++i) {
    double y = 0;
    for (std::size_t k = 0; k < kDims; ++k) {
      const double x = rng.uniform01();
      data.inputs.push_back(x);
      y += (x - 0.5) * (x - 0.5);
    }
    data.targets.push_back(y);
  }
  const auto fixed_fit = gp::fit(data, gp::default_hyperparameters(kDims), {30});
  const auto scaled_fit = gp::fit(data, gp::default_hyperparameters(kDims, scaled), {30, scaled});
  double fixed_mean = 0, scaled_mean = 0;
  for (std::size_t k = 0; k < kDims; ++k) {
    fixed_mean += std::log(fixed_fit.length_scales[k]) / kDims;
    scaled_mean += std::log(scaled_fit.length_scales[k]) / kDims;
  }
  BOOST_TEST(scaled_mean > fixed_mean + 1.0);
  // Each fit is the best of its own objective along its path, prior included.
  BOOST_TEST(gp::fit_objective(data, scaled_fit, scaled).value >
             gp::fit_objective(data, fixed_fit, scaled).value);
  // Its signal variance stays 1 (standardised targets): fitted, it grows with the length
  // scales and the posterior overshoots between observations.
  BOOST_TEST(scaled_fit.signal_variance == 1.0);
  BOOST_TEST(
      (gp::fit(data, gp::default_hyperparameters(kDims, scaled), {30, scaled}) == scaled_fit));
}
