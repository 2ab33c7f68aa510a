#define BOOST_TEST_MODULE core_gaussian_process
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/search/gp/gaussian_process.hpp"
#include "core/search/gp/unit_draws.hpp"

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
  const gp::Hyperparameters h{1.0, {0.3, 5.0}, 1e-4, {}, {}, {}};
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
  const gp::Hyperparameters h{1.0, {0.5}, 1e-12, {}, {}, {}};
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
              gp::Hyperparameters{1.0, std::vector<double>(kDims, 0.5), 1e-2, {}, {}, {}}));
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
  const auto fixed_fit =
      gp::fit(data, gp::default_hyperparameters(kDims), {30, gp::LengthScalePrior::Fixed, {}, {}});
  const auto scaled_fit =
      gp::fit(data, gp::default_hyperparameters(kDims, scaled), {30, scaled, {}, {}});
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
  BOOST_TEST((gp::fit(data, gp::default_hyperparameters(kDims, scaled), {30, scaled, {}, {}}) ==
              scaled_fit));
}

// The sparse prior (SAAS's half-Cauchy on 1 / l^2, at its mode): 20 inputs, of which
// only x0 and x1 move the target, seen at 30 points. Every input starts at the prior's
// mode, l = 1 / sqrt(0.1); the 18 irrelevant ones stay at about the mode or longer, the
// two that matter are fitted well below it, and the objective's gradient includes the prior's.
BOOST_AUTO_TEST_CASE(the_sparse_prior_shortens_only_the_inputs_that_matter) {
  constexpr std::size_t kDims = 20;
  const auto sparse = gp::LengthScalePrior::Sparse;
  const double mode = 1 / std::sqrt(0.1);
  BOOST_TEST(gp::default_hyperparameters(kDims, sparse).length_scales[7] == mode,
             boost::test_tools::tolerance(1e-12));
  Xoshiro256 rng(11);
  gp::Data data;
  data.dims = kDims;
  for (std::size_t i = 0; i < 30; ++i) {
    for (std::size_t k = 0; k < kDims; ++k)
      data.inputs.push_back(rng.uniform01());
    const auto x = data.row(i);
    data.targets.push_back(std::sin(5 * x[0]) + 2 * (x[1] - 0.3) * (x[1] - 0.3));
  }
  const auto fitted =
      gp::fit(data, gp::default_hyperparameters(kDims, sparse), {40, sparse, {}, {}});
  double irrelevant = 0;
  for (std::size_t k = 2; k < kDims; ++k)
    irrelevant += std::log(fitted.length_scales[k]) / (kDims - 2);
  BOOST_TEST(irrelevant > std::log(mode) - 0.1);
  BOOST_TEST(fitted.length_scales[0] < mode / 2);
  BOOST_TEST(fitted.length_scales[1] < mode / 2);
  const auto objective = gp::fit_objective(data, fitted, sparse);
  BOOST_TEST(objective.value >
             gp::fit_objective(data, gp::default_hyperparameters(kDims, sparse), sparse).value);
  constexpr double kStep = 1e-5;
  for (const std::size_t k : {0u, 1u, 9u}) {
    const auto shifted = [&](double by) {
      gp::Hyperparameters g = fitted;
      g.length_scales[k] *= std::exp(by);
      return gp::fit_objective(data, g, sparse).value;
    };
    const double numeric = (shifted(kStep) - shifted(-kStep)) / (2 * kStep);
    BOOST_TEST(objective.gradient[k + 1] == numeric, boost::test_tools::tolerance(1e-4));
  }
  // The prior alone: the sparse and the fixed objectives differ only in the length scales'
  // priors, so moving one length scale from the mode to a tenth of it changes their
  // difference by the change of log(2 rho) - log(1 + (rho / tau)^2) less the log-normal's,
  // whatever the data.
  const auto at = [&](double length) {
    gp::Hyperparameters h = fitted;
    h.length_scales[5] = length;
    return gp::fit_objective(data, h, sparse).value - gp::fit_objective(data, h).value;
  };
  const auto log_density = [](double length) {
    const double rho = 1 / (length * length);
    return std::log(2 * rho) - std::log1p(rho * rho / 0.01);
  };
  const auto log_normal = [](double length) {
    const double z = (std::log(length) - std::log(0.5)) / 1.5;
    return -0.5 * z * z;
  };
  BOOST_TEST(at(mode / 10) - at(mode) == log_density(mode / 10) - log_density(mode) -
                                             log_normal(mode / 10) + log_normal(mode),
             boost::test_tools::tolerance(1e-9));
}

// Input warping: the objective's gradient in a warped input's log a and log b (and in
// the rest) against central differences of the objective.
BOOST_AUTO_TEST_CASE(the_gradient_in_the_warping_matches_finite_differences) {
  auto data = relevant_and_irrelevant(20, 4);
  data.inputs[1] = -1.0;  // an absent parameter's input: outside [0, 1], left unwarped
  const gp::Hyperparameters h{0.8, {0.4, 1.5}, 2e-2, {0, 1}, {0.6, 1.7}, {1.8, 0.5}};
  const auto objective = gp::fit_objective(data, h);
  BOOST_REQUIRE_EQUAL(objective.gradient.size(), 2u + 4u + 2u);
  const auto shifted = [&](std::size_t index, double by) {
    gp::Hyperparameters g = h;
    double* values[] = {&g.signal_variance, &g.length_scales[0], &g.length_scales[1],
                        &g.warp_a[0],       &g.warp_b[0],        &g.warp_a[1],
                        &g.warp_b[1],       &g.noise_variance};
    *values[index] *= std::exp(by);
    return gp::fit_objective(data, g).value;
  };
  constexpr double kStep = 1e-5;
  for (std::size_t j = 0; j < objective.gradient.size(); ++j) {
    const double numeric = (shifted(j, kStep) - shifted(j, -kStep)) / (2 * kStep);
    BOOST_TEST(objective.gradient[j] == numeric, boost::test_tools::tolerance(1e-4));
  }
  // The absent input passes unwarped: predicting there is the same with any warping of it.
  gp::Hyperparameters other = h;
  other.warp_a[1] = 3.0;
  const std::vector<double> absent{0.3, -1.0};
  const auto a = gp::Posterior(data, h).predict(absent);
  BOOST_TEST(std::isfinite(a[0].mean));
  BOOST_TEST(std::isfinite(gp::Posterior(data, other).predict(absent)[0].variance));
}

// y = log(x + 0.01) changes fast near 0 and slowly elsewhere: a stationary kernel needs
// short length scales everywhere, a warped input stretches the start of the range.
BOOST_AUTO_TEST_CASE(a_warped_fit_models_a_response_that_changes_fast_near_one_end) {
  const auto response = [](double x) { return std::log(x + 0.01); };
  Xoshiro256 rng(11);
  gp::Data data;
  data.dims = 1;
  for (std::size_t i = 0; i < 25; ++i) {
    const double x = rng.uniform01();
    data.inputs.push_back(x);
    data.targets.push_back(response(x));
  }
  double mean = 0, sd = 0;
  for (const double y : data.targets)
    mean += y / 25;
  for (const double y : data.targets)
    sd += (y - mean) * (y - mean) / 25;
  sd = std::sqrt(sd);
  for (double& y : data.targets)
    y = (y - mean) / sd;
  const auto start = gp::default_hyperparameters(1);
  const auto plain = gp::fit(data, start, {60, gp::LengthScalePrior::Fixed, {}, {}});
  const auto warped = gp::fit(data, start, {60, gp::LengthScalePrior::Fixed, {0}, {}});
  BOOST_REQUIRE_EQUAL(warped.warped_dims.size(), 1u);
  BOOST_TEST(plain.warped_dims.empty());
  BOOST_TEST(warped.warp_a[0] < 0.8);  // stretched near 0
  BOOST_TEST(gp::fit_objective(data, warped).value > gp::fit_objective(data, plain).value);
  const auto held_out_rmse = [&](const gp::Hyperparameters& h) {
    const gp::Posterior posterior(data, h);
    std::vector<double> points;
    for (int i = 0; i < 200; ++i)
      points.push_back((i + 0.5) / 200);
    const auto predictions = posterior.predict(points);
    double sum = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const double error = predictions[i].mean - (response(points[i]) - mean) / sd;
      sum += error * error;
    }
    return std::sqrt(sum / 200);
  };
  BOOST_TEST(held_out_rmse(warped) < held_out_rmse(plain));
  BOOST_TEST((gp::fit(data, start, {60, gp::LengthScalePrior::Fixed, {0}, {}}) == warped));
  // A warping of an input that does not exist, or without its parameters, is refused.
  gp::Hyperparameters wrong = warped;
  wrong.warped_dims = {1};
  BOOST_CHECK_THROW(gp::Posterior(data, wrong), slurmtune::UsageError);
  wrong.warped_dims = {0};
  wrong.warp_b.clear();
  BOOST_CHECK_THROW(gp::Posterior(data, wrong), slurmtune::UsageError);
}

// A choice of three values as one-hot inputs 0-2 and a number as input 3, where only the
// first value differs from the others: untied, the three length scales part; tied, they
// are fitted as one (an exchangeable kernel for the choice).
BOOST_AUTO_TEST_CASE(tied_length_scales_are_fitted_as_one) {
  Xoshiro256 rng(13);
  gp::Data data;
  data.dims = 4;
  for (std::size_t i = 0; i < 30; ++i) {
    const auto value = static_cast<std::size_t>(rng.uniform01() * 3);
    const double x = rng.uniform01();
    for (std::size_t c = 0; c < 3; ++c)
      data.inputs.push_back(c == value ? 1.0 : 0.0);
    data.inputs.push_back(x);
    data.targets.push_back((value == 0 ? 1.0 : 0.0) + std::sin(4 * x));
  }
  const auto start = gp::default_hyperparameters(4);
  const auto untied = gp::fit(data, start, {30, gp::LengthScalePrior::Fixed, {}, {}});
  const gp::FitOptions tying{30, gp::LengthScalePrior::Fixed, {}, {{0, 1, 2}}};
  const auto tied = gp::fit(data, start, tying);
  BOOST_TEST(untied.length_scales[0] != untied.length_scales[1]);
  BOOST_TEST(tied.length_scales[0] == tied.length_scales[1]);
  BOOST_TEST(tied.length_scales[1] == tied.length_scales[2]);
  BOOST_TEST(tied.length_scales[3] != tied.length_scales[0]);
  BOOST_TEST(gp::fit_objective(data, tied).value > gp::fit_objective(data, start).value);
  BOOST_TEST((gp::fit(data, start, tying) == tied));
  BOOST_CHECK_THROW(gp::fit(data, start, {30, gp::LengthScalePrior::Fixed, {}, {{2, 4}}}),
                    slurmtune::UsageError);
}

// Thompson sampling's draws (issue #64, item 3): over many draws, each point's mean and
// variance are the posterior's, two points close together move together, and points the
// posterior cannot tell apart (the same input twice) are drawn equal.
BOOST_AUTO_TEST_CASE(joint_samples_follow_the_posterior_and_its_correlations) {
  const auto data = relevant_and_irrelevant(20, 3);
  const gp::Hyperparameters h{1.0, {0.3, 5.0}, 1e-3, {}, {}, {}};
  const gp::Posterior posterior(data, h);
  // Far from the data; a point 0.01 away from it; an input given twice.
  const std::vector<double> points{3.0, 0.5, 3.01, 0.5, 0.37, 0.2, 0.37, 0.2};
  const auto predicted = posterior.predict(points);
  constexpr int kDraws = 4000;
  Xoshiro256 rng(5);
  std::vector<double> sum(4, 0.0), sum_squares(4, 0.0);
  double far_pair = 0, largest_twin_gap = 0;
  for (int d = 0; d < kDraws; ++d) {
    std::vector<double> normals(4);
    for (double& e : normals)
      e = gp::standard_normal(rng);
    const auto draw = posterior.joint_sample(points, normals);
    for (std::size_t k = 0; k < 4; ++k) {
      sum[k] += draw[k];
      sum_squares[k] += (draw[k] - predicted[k].mean) * (draw[k] - predicted[k].mean);
    }
    far_pair += (draw[0] - predicted[0].mean) * (draw[1] - predicted[1].mean);
    largest_twin_gap = std::max(largest_twin_gap, std::fabs(draw[2] - draw[3]));
  }
  for (std::size_t k = 0; k < 4; ++k) {
    const double sd = std::sqrt(predicted[k].variance);
    BOOST_TEST(std::fabs(sum[k] / kDraws - predicted[k].mean) < 0.1 * sd + 1e-9);
    BOOST_TEST(std::fabs(sum_squares[k] / kDraws / predicted[k].variance - 1.0) < 0.1);
  }
  // Matérn-5/2 at a distance of 0.01 / 0.3: a correlation of 0.999.
  BOOST_TEST(far_pair / kDraws / std::sqrt(predicted[0].variance * predicted[1].variance) > 0.98);
  BOOST_TEST(largest_twin_gap < 1e-2 * std::sqrt(predicted[2].variance));
  BOOST_CHECK_THROW(posterior.joint_sample(points, std::vector<double>(3, 0.0)), slurmtune::Error);
}
