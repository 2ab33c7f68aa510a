#define BOOST_TEST_MODULE core_trust_region
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "core/search/gp/trust_region.hpp"
#include "core/study/suggester_factory.hpp"
#include "unit/core/search/suggester_testing.hpp"

// The trust region (src/core/search/gp/trust_region.cpp, `[sampler] trust_region`):
// TuRBO-1's side, grown by runs of successes and shrunk by runs of failures; each number's
// share of it by its length scale; the box's draws; and MOBSTER's model trials inside it.
using namespace slurmtune::core;
using namespace slurmtune::testing;
using slurmtune::core::gp::TrustRegion;

BOOST_AUTO_TEST_CASE(three_successes_double_the_side_up_to_its_ceiling) {
  TrustRegion box(2);
  box.observed(1, -1.0, true);  // the resource's first: nothing to beat, not judged
  BOOST_TEST(box.side() == TrustRegion::kInitialSide);
  for (int k = 1; k <= 3; ++k)
    box.observed(1, -1.0 + 0.1 * k, true);
  BOOST_TEST(box.side() == 1.6);
  for (int k = 4; k <= 6; ++k)
    box.observed(1, -1.0 + 0.1 * k, true);
  BOOST_TEST(box.side() == TrustRegion::kMaxSide);
}

BOOST_AUTO_TEST_CASE(a_run_of_max_4_d_failures_halves_it_and_a_success_resets_the_run) {
  TrustRegion box(6);  // 6 parameters: 6 failures in a row halve the side
  box.observed(1, 0.0, true);
  for (int k = 0; k < 5; ++k)
    box.observed(1, -1.0, true);
  box.observed(1, 1.0, true);  // a success: the failures' run starts again
  for (int k = 0; k < 5; ++k)
    box.observed(1, 0.5, true);
  BOOST_TEST(box.side() == TrustRegion::kInitialSide);
  box.observed(1, std::numeric_limits<double>::quiet_NaN(), true);  // a diverged trial fails
  BOOST_TEST(box.side() == TrustRegion::kInitialSide / 2);
  // Not better by 1e-3 of the best's magnitude: a failure, and the best does not move.
  TrustRegion few(1);  // at least 4 failures
  few.observed(1, 1.0, true);
  for (int k = 0; k < 4; ++k)
    few.observed(1, 1.0005, true);
  BOOST_TEST(few.side() == TrustRegion::kInitialSide / 2);
}

BOOST_AUTO_TEST_CASE(uncounted_observations_move_the_best_and_judge_nothing) {
  TrustRegion box(1);
  box.observed(1, 0.0, true);
  box.observed(1, 5.0, false);  // a start-up or random draw, or a promoted trial's rung
  for (int k = 0; k < 3; ++k)
    box.observed(1, 4.0, false);
  BOOST_TEST(box.side() == TrustRegion::kInitialSide);
  for (int k = 0; k < 4; ++k)
    box.observed(1, 4.9, true);  // below the best the uncounted one set: failures
  BOOST_TEST(box.side() == TrustRegion::kInitialSide / 2);
  // Each resource its own best: a first result at rung 3 has nothing to beat there.
  box.observed(3, -100.0, true);
  BOOST_TEST(box.side() == TrustRegion::kInitialSide / 2);
}

BOOST_AUTO_TEST_CASE(a_side_below_the_floor_starts_again_at_the_first_one) {
  TrustRegion box(1);
  box.observed(1, 0.0, true);
  double side = box.side();
  for (int halving = 1; halving <= 6; ++halving) {
    for (int k = 0; k < 4; ++k)
      box.observed(1, -1.0, true);
    side /= 2;
    BOOST_TEST(box.side() == side);
  }
  for (int k = 0; k < 4; ++k)
    box.observed(1, -1.0, true);  // 0.8 / 128 < 1/128
  BOOST_TEST(box.side() == TrustRegion::kInitialSide);
}

BOOST_AUTO_TEST_CASE(box_weights_are_length_scales_over_their_geometric_mean) {
  const SearchSpace space(
      {{"a", ranged(DomainKind::Uniform, 0, 1)},
       {"opt",
        listed(DomainKind::Choice, {ParamValue{"sgd"}, ParamValue{"adam"}, ParamValue{"lamb"}})},
       {"b", ranged(DomainKind::LogUniform, 1e-4, 1)}});
  // Inputs: a (0), the choice's three (1-3), b (4), the resource (5).
  const std::vector<double> scales{0.2, 1.0, 1.0, 1.0, 0.8, 3.0};
  const std::vector<std::size_t> numbers{0, 4};
  const auto w = gp::box_weights(space, scales, numbers);
  BOOST_TEST(w[0] == 0.5, boost::test_tools::tolerance(1e-12));  // 0.2 / sqrt(0.16)
  BOOST_TEST(w[1] == 1.0);
  BOOST_TEST(w[2] == 2.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(w[0] * w[2] == 1.0, boost::test_tools::tolerance(1e-12));
  // No length scales (the random forest): the side alike for every number.
  for (const double x : gp::box_weights(space, {}, numbers))
    BOOST_TEST(x == 1.0);
}

BOOST_AUTO_TEST_CASE(draws_stay_in_the_box_and_fill_it) {
  const SearchSpace space(
      {{"a", ranged(DomainKind::Uniform, 0, 10)}, {"b", ranged(DomainKind::LogUniform, 1e-4, 1)}});
  const Configuration centre{{ParamValue{9.5}, ParamValue{1e-2}}};
  const std::vector<double> weights{0.5, 2.0};
  Xoshiro256 rng(3);
  double a_low = 1e9, a_high = -1e9, b_low = 1e9, b_high = -1e9;
  for (int k = 0; k < 2000; ++k) {
    const auto c = gp::draw_in_box(space, centre, weights, 0.4, 0.25, rng);
    const double a = space.parameters()[0].domain.to_unit(c.values[0]);
    const double b = space.parameters()[1].domain.to_unit(c.values[1]);
    a_low = std::min(a_low, a), a_high = std::max(a_high, a);
    b_low = std::min(b_low, b), b_high = std::max(b_high, b);
  }
  // a: 0.95 +- 0.1, clipped at 1; b (log space, 0.5): +- 0.4.
  BOOST_TEST(a_low >= 0.85);
  BOOST_TEST(a_low < 0.86);
  BOOST_TEST(a_high <= 1.0);
  BOOST_TEST(a_high > 0.99);
  BOOST_TEST(b_low >= 0.1);
  BOOST_TEST(b_low < 0.11);
  BOOST_TEST(b_high <= 0.9);
  BOOST_TEST(b_high > 0.89);
}

BOOST_AUTO_TEST_CASE(past_twenty_parameters_a_draw_moves_some_and_at_least_one) {
  std::vector<Parameter> params(40);
  for (std::size_t j = 0; j < params.size(); ++j) {
    params[j].name = std::string(1, static_cast<char>('A' + j));  // A, B, ... h
    params[j].domain = ranged(DomainKind::Uniform, 0, 1);
  }
  const SearchSpace space(params);
  const Configuration centre{std::vector<ParamValue>(40, ParamValue{0.5})};
  const std::vector<double> weights(40, 1.0);
  Xoshiro256 rng(5);
  double moved = 0;
  std::size_t fewest = 40;
  for (int k = 0; k < 500; ++k) {
    const auto c = gp::draw_in_box(space, centre, weights, 0.8, 0.25, rng);
    std::size_t here = 0;
    for (int j = 0; j < 40; ++j)
      here += as_number(c.values[j]) != 0.5;
    moved += static_cast<double>(here) / 500;
    fewest = std::min(fewest, here);
  }
  BOOST_TEST(moved == 20.0, boost::test_tools::tolerance(0.05));  // 40 x 20/40 on average
  BOOST_TEST(fewest >= 1u);
}

namespace {

// A narrow good region: loss 1 away from a well of width 0.02 around (0.31, 0.62).
double narrow_well(const Configuration& c) {
  const double dx = as_number(c.values[0]) - 0.31, dy = as_number(c.values[1]) - 0.62;
  return 1.0 - std::exp(-(dx * dx + dy * dy) / (2 * 0.02 * 0.02)) +
         0.1 * std::sqrt(dx * dx + dy * dy);
}

// The model trials' mean distance to the well over trials 40 to 79, with or without the box
// (`share`: of the candidates drawn from it).
double distance_of_model_trials(bool trust_region, double share = 1.0) {
  const SearchSpace space(
      {{"x", ranged(DomainKind::Uniform, 0, 1)}, {"y", ranged(DomainKind::Uniform, 0, 1)}});
  auto spec = mobster_spec(10);
  spec.mobster.trust_region = trust_region;
  spec.mobster.trust_region_share = share;
  const auto s = make_suggester(space, spec, false, 8);
  double sum = 0;
  std::size_t model = 0;
  for (TrialId t = 0; t < 80; ++t) {
    const auto sug = s->suggest(t);
    const double loss = narrow_well(sug.config);
    if (t >= 40 && sug.info.origin == SuggestionOrigin::Model) {
      sum += std::hypot(as_number(sug.config.values[0]) - 0.31,
                        as_number(sug.config.values[1]) - 0.62);
      ++model;
    }
    s->reported(t, 1, loss, at_rung(1, SchedulerDecision::Stop));
    s->ended(t, TrialEnd::Stopped);
  }
  return sum / static_cast<double>(model);
}

}  // namespace

// Where the box is for: once the well's slope has been found, the candidates gather around
// the best trial and the model trials close in, where most of the whole space's 250
// candidates fall far from it.
BOOST_AUTO_TEST_CASE(mobster_model_trials_close_in_on_a_narrow_well_inside_the_box) {
  const double boxed = distance_of_model_trials(true), whole = distance_of_model_trials(false);
  BOOST_TEST_MESSAGE("mean distance of model trials: " << boxed << " boxed, " << whole << " not");
  BOOST_TEST(boxed < whole / 2);
  // Half the candidates from the box, half from the whole space: expected improvement,
  // high far from the observations, takes mostly the whole space's (here as far out as
  // without the box): the box acts by confining the choice, not by adding candidates.
  const double half = distance_of_model_trials(true, 0.5);
  BOOST_TEST_MESSAGE("half the candidates from the box: " << half);
  BOOST_TEST(half > 2 * boxed);
}

BOOST_AUTO_TEST_CASE(along_the_short_inputs_only_the_short_numbers_are_boxed) {
  const SearchSpace space(
      {{"a", ranged(DomainKind::Uniform, 0, 1)},
       {"opt", listed(DomainKind::Choice, {ParamValue{"sgd"}, ParamValue{"adam"}})},
       {"b", ranged(DomainKind::Uniform, 0, 1)}});
  const Configuration centre{{ParamValue{0.3}, ParamValue{"sgd"}, ParamValue{0.7}}};
  const std::vector<double> weights{0.25, 1.0, 4.0};  // a short; the choice and b are not
  BOOST_TEST(gp::any_short(weights));
  BOOST_TEST(!gp::any_short(std::vector<double>{0.5, 1.0, 2.0}));  // half is not under half
  Xoshiro256 rng(7);
  double a_low = 1, a_high = 0, b_low = 1, b_high = 0;
  int adam = 0;
  for (int k = 0; k < 2000; ++k) {
    const auto c = gp::draw_along_short(space, centre, weights, 0.8, rng);
    const double a = as_number(c.values[0]), b = as_number(c.values[2]);
    a_low = std::min(a_low, a), a_high = std::max(a_high, a);
    b_low = std::min(b_low, b), b_high = std::max(b_high, b);
    adam += std::get<std::string>(c.values[1]) == "adam";
  }
  // a: 0.3 +- 0.8 x 0.25 / 2; b and the choice over their whole domains.
  BOOST_TEST(a_low >= 0.2);
  BOOST_TEST(a_low < 0.21);
  BOOST_TEST(a_high <= 0.4);
  BOOST_TEST(a_high > 0.39);
  BOOST_TEST(b_low < 0.01);
  BOOST_TEST(b_high > 0.99);
  BOOST_TEST(std::abs(adam - 1000) < 100);  // half of them, to within 10 %
}

namespace {

// A good region narrow along x alone: y and z do not matter.
double narrow_in_x(const Configuration& c) {
  const double dx = as_number(c.values[0]) - 0.31;
  return 1.0 - std::exp(-dx * dx / (2 * 0.02 * 0.02)) + 0.1 * std::fabs(dx);
}

struct ModelTrials {
  double x_distance = 0;           ///< mean |x - 0.31| of model trials 40 to 79
  double y_spread = 0;             ///< the standard deviation of their y
  std::vector<Configuration> all;  ///< every suggestion
};

ModelTrials model_trials_in_x(bool trust_region, TrustRegionInputs inputs,
                              Surrogate surrogate = Surrogate::GaussianProcess) {
  const SearchSpace space({{"x", ranged(DomainKind::Uniform, 0, 1)},
                           {"y", ranged(DomainKind::Uniform, 0, 1)},
                           {"z", ranged(DomainKind::Uniform, 0, 1)}});
  auto spec = mobster_spec(10);
  spec.mobster.trust_region = trust_region;
  spec.mobster.trust_region_inputs = inputs;
  spec.mobster.surrogate = surrogate;
  const auto s = make_suggester(space, spec, false, 8);
  ModelTrials out;
  double y_sum = 0, y_squares = 0, model = 0;
  for (TrialId t = 0; t < 80; ++t) {
    const auto sug = s->suggest(t);
    out.all.push_back(sug.config);
    if (t >= 40 && sug.info.origin == SuggestionOrigin::Model) {
      const double y = as_number(sug.config.values[1]);
      out.x_distance += std::fabs(as_number(sug.config.values[0]) - 0.31);
      y_sum += y, y_squares += y * y, ++model;
    }
    s->reported(t, 1, narrow_in_x(sug.config), at_rung(1, SchedulerDecision::Stop));
    s->ended(t, TrialEnd::Stopped);
  }
  out.x_distance /= model;
  out.y_spread = std::sqrt(y_squares / model - (y_sum / model) * (y_sum / model));
  return out;
}

}  // namespace

// The model finds x short (its length scale far under y's and z's): the box closes in
// along x, and y is still drawn over its whole range.
BOOST_AUTO_TEST_CASE(mobster_boxes_the_short_input_and_leaves_the_others_free) {
  const auto boxed = model_trials_in_x(true, TrustRegionInputs::Short);
  const auto whole = model_trials_in_x(false, TrustRegionInputs::All);
  BOOST_TEST_MESSAGE("model trials' mean |x - 0.31|: " << boxed.x_distance << " along the short "
                                                       << "inputs, " << whole.x_distance
                                                       << " without a box; y's spread "
                                                       << boxed.y_spread);
  BOOST_TEST(boxed.x_distance < whole.x_distance / 2);
  BOOST_TEST(boxed.y_spread > 0.2);  // a uniform draw's is 0.29
}

// No input short (the random forest has no length scales): the candidates are those
// without a box, so every suggestion is the same.
BOOST_AUTO_TEST_CASE(where_no_input_is_short_the_candidates_are_those_without_a_box) {
  const auto boxed = model_trials_in_x(true, TrustRegionInputs::Short, Surrogate::RandomForest);
  const auto whole = model_trials_in_x(false, TrustRegionInputs::All, Surrogate::RandomForest);
  BOOST_TEST((boxed.all == whole.all));
}
