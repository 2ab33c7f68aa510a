#define BOOST_TEST_MODULE core_target_transform
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <vector>

#include "core/search/gp/target_transform.hpp"

using namespace slurmtune::core::gp;

namespace {

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (const double x : v)
    sum += x;
  return sum / static_cast<double>(v.size());
}

double variance_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double sum = 0;
  for (const double x : v)
    sum += (x - m) * (x - m);
  return sum / static_cast<double>(v.size());
}

}  // namespace

BOOST_AUTO_TEST_CASE(normal_scores_are_quantiles_of_mid_ranks_with_ties_shared) {
  // Ranks 1..4 of 4: plotting positions 1/8, 3/8, 5/8, 7/8; the tie (2.0, 2.0) shares
  // rank 1.5, position 1/4.
  const auto z = normal_scores(std::vector<double>{5.0, 2.0, 9.0, 2.0});
  BOOST_TEST(z[1] == z[3]);
  BOOST_TEST(z[1] == -0.6744897501960817, boost::test_tools::tolerance(1e-12));  // Φ⁻¹(0.25)
  BOOST_TEST(z[0] == 0.31863936396437514, boost::test_tools::tolerance(1e-12));  // Φ⁻¹(0.625)
  BOOST_TEST(z[2] == 1.1503493803760079, boost::test_tools::tolerance(1e-12));   // Φ⁻¹(0.875)
  // Symmetric without ties: the lowest and highest mirror each other.
  const auto s = normal_scores(std::vector<double>{0.1, 0.4, 0.3});
  BOOST_TEST(s[0] == -s[1], boost::test_tools::tolerance(1e-12));
  BOOST_TEST(std::fabs(s[2]) < 1e-12);
}

BOOST_AUTO_TEST_CASE(standardised_targets_have_mean_zero_variance_one_and_map_back_exactly) {
  const std::vector<double> y{1.0, 4.0, -2.0, 7.5, 3.0};
  const auto scaled = scale_targets(TargetTransform::Standardise, y);
  BOOST_TEST(std::fabs(mean_of(scaled.values)) < 1e-12);
  BOOST_TEST(variance_of(scaled.values) == 1.0, boost::test_tools::tolerance(1e-12));
  for (std::size_t i = 0; i < y.size(); ++i)
    BOOST_TEST(scaled.scale.target_units(scaled.values[i]) == y[i],
               boost::test_tools::tolerance(1e-12));
  // Affine beyond the data too.
  const double far = scaled.scale.target_units(10.0);
  BOOST_TEST(far > 7.5 * 3);
}

// One diverged observation among ordinary ones: standardised, the ordinary targets are
// squeezed together; under the copula they keep the spread their ranks give them, the
// outlier is just the last rank, and a strictly monotone rescaling changes nothing.
BOOST_AUTO_TEST_CASE(the_copula_depends_on_order_alone_and_an_outlier_squeezes_nothing) {
  const std::vector<double> y{-0.30, -0.10, -0.25, -0.12, -0.20, -1e9};
  const auto plain = scale_targets(TargetTransform::Standardise, y);
  const auto copula = scale_targets(TargetTransform::Copula, y);
  BOOST_TEST(std::fabs(plain.values[0] - plain.values[1]) < 1e-6);
  BOOST_TEST(std::fabs(copula.values[0] - copula.values[1]) > 0.5);
  BOOST_TEST(std::fabs(mean_of(copula.values)) < 1e-12);
  BOOST_TEST(variance_of(copula.values) == 1.0, boost::test_tools::tolerance(1e-12));

  std::vector<double> rescaled;
  for (const double v : y)
    rescaled.push_back(std::exp(v) * 100 + 3);
  const auto again = scale_targets(TargetTransform::Copula, rescaled);
  for (std::size_t i = 0; i < y.size(); ++i)
    BOOST_TEST(again.values[i] == copula.values[i]);
}

BOOST_AUTO_TEST_CASE(the_copula_maps_back_to_the_targets_it_was_fitted_on_and_clamps_beyond) {
  const std::vector<double> y{3.0, 1.0, 10.0, 2.0, 50.0};
  const auto copula = scale_targets(TargetTransform::Copula, y);
  for (std::size_t i = 0; i < y.size(); ++i)
    BOOST_TEST(copula.scale.target_units(copula.values[i]) == y[i],
               boost::test_tools::tolerance(1e-9));
  BOOST_TEST(copula.scale.target_units(100.0) == 50.0);
  BOOST_TEST(copula.scale.target_units(-100.0) == 1.0);
  // Between two ranks, between their targets; an interval keeps its order.
  const double between = copula.scale.target_units(0.5 * (copula.values[0] + copula.values[2]));
  BOOST_TEST(between > 3.0);
  BOOST_TEST(between < 10.0);
  const auto [centre, low, high] = copula.scale.target_interval(copula.values[0], 0.3);
  BOOST_TEST(low < centre);
  BOOST_TEST(centre < high);
}

BOOST_AUTO_TEST_CASE(constant_and_empty_targets_map_to_zero) {
  for (const auto transform : {TargetTransform::Standardise, TargetTransform::Copula}) {
    const auto constant = scale_targets(transform, std::vector<double>{2.0, 2.0, 2.0});
    for (const double v : constant.values)
      BOOST_TEST(v == 0.0);
    BOOST_TEST(constant.scale.target_units(0.0) == 2.0);
    BOOST_TEST(scale_targets(transform, std::vector<double>{}).values.empty());
  }
}
