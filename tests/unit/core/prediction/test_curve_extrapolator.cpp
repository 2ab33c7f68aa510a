// core/prediction: learning curves extrapolated by the weighted parametric families.
#define BOOST_TEST_MODULE core_curve_extrapolator
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "core/prediction/curve_extrapolator.hpp"

namespace core = slurmtune::core;

namespace {

std::vector<core::ReportedPoint> curve_of(double (*f)(double), int steps, double noise = 0,
                                          unsigned seed = 1) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, noise);
  std::vector<core::ReportedPoint> out;
  for (int s = 1; s <= steps; ++s)
    out.push_back({static_cast<double>(s), f(s) + (noise > 0 ? normal(rng) : 0.0)});
  return out;
}

double power_law(double x) {
  return 0.2 + 0.8 * std::pow(x, -0.7);
}
double exponential(double x) {
  return 0.35 + 0.6 * std::exp(-0.25 * x);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_power_law_is_forecast_from_its_first_third) {
  const auto curve = curve_of(power_law, 9);
  const auto p = core::CurveExtrapolator().predict(curve, 27);
  BOOST_REQUIRE(p);
  BOOST_TEST(p->mean == power_law(27), boost::test_tools::tolerance(0.01));
  BOOST_TEST(p->weights[static_cast<std::size_t>(core::CurveFamily::Pow3)] > 0.5);
  BOOST_TEST(p->lower <= p->mean);
  BOOST_TEST(p->upper >= p->mean);
}

BOOST_AUTO_TEST_CASE(an_exponential_is_forecast_and_its_family_weighs_most) {
  const auto curve = curve_of(exponential, 10);
  const auto p = core::CurveExtrapolator().predict(curve, 30);
  BOOST_REQUIRE(p);
  BOOST_TEST(p->mean == exponential(30), boost::test_tools::tolerance(0.02));
  const auto& w = p->weights;
  BOOST_TEST(w[static_cast<std::size_t>(core::CurveFamily::Exp3)] ==
             *std::max_element(w.begin(), w.end()));
}

BOOST_AUTO_TEST_CASE(noisy_curves_get_intervals_that_mostly_hold_the_truth) {
  // 40 noisy power laws: the 10-90 % interval should hold the true final value in
  // roughly 80 % of them; far fewer would mean it is overconfident.
  int inside = 0;
  double width = 0;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    const auto p = core::CurveExtrapolator().predict(curve_of(power_law, 9, 0.01, seed), 27);
    BOOST_REQUIRE(p);
    const double truth = power_law(27);
    inside += p->lower <= truth && truth <= p->upper;
    width += p->upper - p->lower;
  }
  BOOST_TEST_MESSAGE(inside << " of 40 intervals hold the truth, mean width " << width / 40);
  BOOST_TEST(inside >= 24);
  BOOST_TEST(width / 40 < 0.2);
}

BOOST_AUTO_TEST_CASE(the_same_curve_gives_the_same_prediction_bit_for_bit) {
  const auto curve = curve_of(power_law, 7, 0.02, 3);
  const auto a = core::CurveExtrapolator().predict(curve, 27);
  const auto b = core::CurveExtrapolator().predict(curve, 27);
  BOOST_REQUIRE(a && b);
  BOOST_TEST(a->mean == b->mean);
  BOOST_TEST(a->lower == b->lower);
  BOOST_TEST(a->upper == b->upper);
}

BOOST_AUTO_TEST_CASE(too_short_or_unusable_curves_give_no_prediction) {
  const core::CurveExtrapolator extrapolate;
  const std::vector<core::ReportedPoint> two = {{1, 0.9}, {2, 0.8}};
  BOOST_TEST(!extrapolate.predict(two, 10));
  // Non-finite values, non-positive and repeated steps are left out before counting.
  const std::vector<core::ReportedPoint> odd = {{0, 1.0}, {1, NAN}, {2, 0.8}, {2, 0.7}, {3, 0.7}};
  BOOST_TEST(!extrapolate.predict(odd, 10));
  BOOST_TEST(!extrapolate.predict(curve_of(power_law, 5), NAN));
}

BOOST_AUTO_TEST_CASE(a_flat_curve_stays_flat) {
  const std::vector<core::ReportedPoint> flat = {{1, 0.5}, {2, 0.5}, {3, 0.5}, {4, 0.5}, {5, 0.5}};
  const auto p = core::CurveExtrapolator().predict(flat, 50);
  BOOST_REQUIRE(p);
  BOOST_TEST(p->mean == 0.5, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(p->upper - p->lower < 1e-9);
}

BOOST_AUTO_TEST_CASE(a_target_before_the_last_report_is_read_as_the_last_report) {
  const auto curve = curve_of(power_law, 9);
  const auto p = core::CurveExtrapolator().predict(curve, 3);
  BOOST_REQUIRE(p);
  BOOST_TEST(p->mean == power_law(9), boost::test_tools::tolerance(0.01));
}
