#define BOOST_TEST_MODULE core_mobster_suggester
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "core/random.hpp"
#include "core/search/model_suggesters.hpp"
#include "core/study/suggester_factory.hpp"
#include "unit/core/search/suggester_testing.hpp"

// MOBSTER's suggester (src/core/search/gp/mobster_suggester.cpp) through the Suggester
// interface: start-up, model, Hyper-Tune weighting, copula targets, Sobol start-up, the
// random share, pending trials, the mean acquisition, the greedy share and step costs.
using namespace slurmtune::core;
using namespace slurmtune::testing;
using slurmtune::core::gp::TargetTransform;

BOOST_AUTO_TEST_CASE(mobster_starts_at_random_then_follows_its_model) {
  // One parameter, observed at rung 1 (stopped there) and at 3: the model proposes near
  // the optimum (x = 0.8) at the first rung, where uniform draws average 0.34 away.
  const SearchSpace space({{"x", ranged(DomainKind::Uniform, 0, 1)}});
  const auto s = make_suggester(space, mobster_spec(5), false, 4);
  double distance = 0;
  for (TrialId t = 0; t < 30; ++t) {
    const auto sug = s->suggest(t);
    BOOST_TEST((sug.info.origin == (t < 5 ? SuggestionOrigin::Startup : SuggestionOrigin::Model)));
    const double x = as_number(sug.config.values[0]);
    if (t >= 10) distance += std::fabs(x - 0.8);
    const double loss = std::fabs(x - 0.8);
    const bool promoted = t % 3 == 0;
    s->reported(t, 1, loss + 0.5,
                at_rung(1, promoted ? SchedulerDecision::Continue : SchedulerDecision::Stop));
    if (promoted) s->reported(t, 3, loss + 0.2, at_rung(3, SchedulerDecision::Stop));
    s->ended(t, TrialEnd::Stopped);
  }
  BOOST_TEST(distance / 20 < 0.15);
}

// Issue #43, item 3: the optimum lies just inside the upper bound (x = 0.97). Local
// candidates perturb the best configurations; an overshoot clamped to the bound put
// candidates exactly on it, and the acquisition took them. Folded back into the range,
// no model suggestion sits on the bound itself.
BOOST_AUTO_TEST_CASE(mobster_local_candidates_do_not_pile_onto_a_bound) {
  const SearchSpace space({{"x", ranged(DomainKind::Uniform, 0, 1)}});
  const auto s = make_suggester(space, mobster_spec(5), false, 6);
  std::size_t on_bound = 0, model = 0;
  for (TrialId t = 0; t < 60; ++t) {
    const auto sug = s->suggest(t);
    const double x = as_number(sug.config.values[0]);
    if (sug.info.origin == SuggestionOrigin::Model) {
      ++model;
      on_bound += x > 1.0 - 1e-9;
    }
    s->reported(t, 1, std::fabs(x - 0.97), at_rung(1, SchedulerDecision::Stop));
    s->ended(t, TrialEnd::Stopped);
  }
  BOOST_TEST(model == 55u);
  BOOST_TEST(on_bound == 0u);
}

// Curves that cross: at rung 1 the best x is 0.2, from rung 3 on it is 0.8, and every
// trial is observed at rungs 1, 3 and 9. MOBSTER's first-rung acquisition follows rung 1;
// Hyper-Tune's weighting finds that rung 1 ranks against rung 9 and follows rungs 3 and 9.
BOOST_AUTO_TEST_CASE(mobster_hyper_tune_weighting_trusts_the_rungs_that_rank_like_the_last) {
  const SearchSpace space({{"x", ranged(DomainKind::Uniform, 0, 1)}});
  for (const auto weighting : {RungWeighting::FirstRung, RungWeighting::HyperTune}) {
    auto spec = mobster_spec(6);
    spec.mobster.rung_weighting = weighting;
    const auto s = make_suggester(space, spec, false, 5);
    double from_early = 0, from_late = 0;
    for (TrialId t = 0; t < 30; ++t) {
      const double x = as_number(s->suggest(t).config.values[0]);
      if (t >= 10) {
        from_early += std::fabs(x - 0.2) / 20;
        from_late += std::fabs(x - 0.8) / 20;
      }
      s->reported(t, 1, std::fabs(x - 0.2), at_rung(1, SchedulerDecision::Continue));
      s->reported(t, 3, std::fabs(x - 0.8) * 0.5, at_rung(3, SchedulerDecision::Continue));
      s->reported(t, 9, std::fabs(x - 0.8) * 0.3, at_rung(9, SchedulerDecision::Stop));
      s->ended(t, TrialEnd::Stopped);
    }
    BOOST_TEST_CONTEXT((weighting == RungWeighting::HyperTune ? "hyper-tune" : "first-rung")) {
      if (weighting == RungWeighting::HyperTune)
        BOOST_TEST(from_late < 0.15);
      else
        BOOST_TEST(from_early < 0.15);
    }
  }
}

// Copula targets (issue #43): the model sees only the losses' order, so reporting
// exp(8 * loss) instead of the loss changes no suggestion, and one diverged trial (a loss
// of 1e12) does not blind it. Standardised targets see both: with the outlier, the model's
// suggestions end up farther from the optimum than random draws.
BOOST_AUTO_TEST_CASE(mobster_copula_targets_depend_on_the_losses_order_alone) {
  const SearchSpace space({{"x", ranged(DomainKind::Uniform, 0, 1)}});
  const auto run = [&](TargetTransform transform, bool exponential) {
    auto spec = mobster_spec(5);
    spec.mobster.target_transform = transform;
    const auto s = make_suggester(space, spec, false, 4);
    std::vector<double> xs;
    for (TrialId t = 0; t < 30; ++t) {
      xs.push_back(as_number(s->suggest(t).config.values[0]));
      const double loss = t == 2 ? 1e12 : std::fabs(xs.back() - 0.8) + 0.5;
      s->reported(t, 1, exponential ? std::exp(8 * std::min(loss, 10.0)) : loss,
                  at_rung(1, SchedulerDecision::Stop));
      s->ended(t, TrialEnd::Stopped);
    }
    return xs;
  };
  const auto distance = [](const std::vector<double>& xs) {
    double sum = 0;
    for (std::size_t t = 10; t < xs.size(); ++t)
      sum += std::fabs(xs[t] - 0.8);
    return sum / static_cast<double>(xs.size() - 10);
  };
  // Uniform draws average 0.34 away from the optimum.
  const auto copula = run(TargetTransform::Copula, false);
  const auto standardised = run(TargetTransform::Standardise, false);
  BOOST_TEST(copula == run(TargetTransform::Copula, true));
  BOOST_TEST(distance(copula) < 0.25);
  BOOST_TEST(standardised != run(TargetTransform::Standardise, true));
  BOOST_TEST(distance(standardised) > 0.34);
}

// startup_design = "sobol": the first eight start-up trials put one x in each eighth of its
// range and each of four choices twice, and a trial's configuration does not depend on
// which trials were suggested before it (a resumed study draws the same).
BOOST_AUTO_TEST_CASE(mobster_sobol_start_up_spreads_the_first_trials) {
  const SearchSpace space(
      {{"x", ranged(DomainKind::Uniform, 0, 1)},
       {"opt", listed(DomainKind::Choice, {ParamValue{"sgd"}, ParamValue{"adam"}, ParamValue{"rms"},
                                           ParamValue{"lion"}})}});
  auto spec = mobster_spec(8);
  spec.mobster.startup_design = StartupDesign::Sobol;
  const auto s = make_suggester(space, spec, false, 9);
  std::vector<int> eighths(8, 0);
  std::map<std::string, int> choices;
  std::vector<Configuration> configs;
  for (TrialId t = 0; t < 8; ++t) {
    const auto sug = s->suggest(t);
    BOOST_TEST((sug.info.origin == SuggestionOrigin::Startup));
    configs.push_back(sug.config);
    ++eighths[static_cast<std::size_t>(as_number(sug.config.values[0]) * 8)];
    ++choices[std::get<std::string>(sug.config.values[1])];
  }
  BOOST_TEST(eighths == std::vector<int>(8, 1), boost::test_tools::per_element());
  BOOST_TEST(choices.size() == 4u);
  for (const auto& [value, count] : choices)
    BOOST_TEST(count == 2, value);
  const auto fresh = make_suggester(space, spec, false, 9);
  BOOST_TEST((fresh->suggest(5).config == configs[5]));
}

BOOST_AUTO_TEST_CASE(mobster_draws_its_random_fraction_at_random) {
  const SearchSpace space({{"x", ranged(DomainKind::Uniform, 0, 1)}});
  auto spec = mobster_spec(5);
  spec.mobster.random_fraction = 0.5;
  const auto s = make_suggester(space, spec, false, 4);
  std::size_t random = 0;
  for (TrialId t = 0; t < 105; ++t) {
    const auto sug = s->suggest(t);
    if (t >= 5) random += sug.info.origin == SuggestionOrigin::Random;
    s->reported(t, 1, std::fabs(as_number(sug.config.values[0]) - 0.8),
                at_rung(1, SchedulerDecision::Stop));
    s->ended(t, TrialEnd::Stopped);
  }
  BOOST_TEST(random > 35u);  // 50 expected of 100
  BOOST_TEST(random < 65u);
}

BOOST_AUTO_TEST_CASE(mobster_spreads_suggestions_over_pending_trials) {
  // Four trials suggested at once, none reported yet: each later one is told the earlier
  // ones are pending (kriging believer) and goes elsewhere, not to the same point.
  const SearchSpace space(
      {{"x", ranged(DomainKind::Uniform, 0, 1)}, {"y", ranged(DomainKind::Uniform, 0, 1)}});
  const auto s = make_suggester(space, mobster_spec(4), false, 8);
  for (TrialId t = 0; t < 8; ++t) {
    const auto sug = s->suggest(t);
    const double x = as_number(sug.config.values[0]), y = as_number(sug.config.values[1]);
    s->reported(t, 1, (x - 0.5) * (x - 0.5) + y, at_rung(1, SchedulerDecision::Stop));
    s->ended(t, TrialEnd::Stopped);
  }
  std::vector<Configuration> batch;
  for (TrialId t = 8; t < 12; ++t)
    batch.push_back(s->suggest(t).config);
  for (std::size_t i = 0; i < batch.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      BOOST_TEST(!(batch[i] == batch[j]));
}

// max_pending (issue #62): with thousands of workers a suggestion fantasises only the
// pending trials started last, so its cost does not grow with the workers. A suggester
// that saw 12 trials start fantasises, with max_pending = 4, exactly what one that saw
// only the last 4 of them start does.
BOOST_AUTO_TEST_CASE(mobster_fantasises_only_the_latest_pending_trials) {
  const SearchSpace space(
      {{"x", ranged(DomainKind::Uniform, 0, 1)}, {"y", ranged(DomainKind::Uniform, 0, 1)}});
  Xoshiro256 rng(3);
  std::vector<Configuration> pending;
  for (int k = 0; k < 12; ++k)
    pending.push_back(Configuration{{ParamValue{rng.uniform01()}, ParamValue{rng.uniform01()}}});
  const auto with = [&](std::size_t max_pending, TrialId first_pending) {
    auto spec = mobster_spec(4);
    spec.mobster.max_pending = max_pending;
    spec.mobster.wave = 0;  // 12 pending over a cap of 4 would be a launch wave
    // A constant liar: a fantasy moves the mean, which expected improvement far above
    // the incumbent would follow whatever the fantasies did to the variance.
    spec.mobster.acquisition = Acquisition::Mean;
    auto s = make_suggester(space, spec, false, 8);
    for (TrialId t = 0; t < 8; ++t) {
      const auto sug = s->suggest(t);
      const double x = as_number(sug.config.values[0]), y = as_number(sug.config.values[1]);
      s->reported(t, 1, (x - 0.5) * (x - 0.5) + y, at_rung(1, SchedulerDecision::Stop));
      s->ended(t, TrialEnd::Stopped);
    }
    for (TrialId t = first_pending; t < 20; ++t)
      s->started(t, pending[t - 8]);
    std::vector<Suggestion> out;
    for (TrialId t = 20; t < 26; ++t)
      out.push_back(s->suggest(t));
    return out;
  };
  const auto last_four = with(4, 16);
  // The 8 trials started first sit where the capped model goes first: fantasised, they
  // would turn it away.
  for (int k = 0; k < 8; ++k)
    pending[k] = last_four[0].config;
  const auto capped = with(4, 8), every = with(64, 8);
  BOOST_REQUIRE_EQUAL(capped.size(), last_four.size());
  bool differs = false;
  for (std::size_t k = 0; k < capped.size(); ++k) {
    BOOST_TEST((capped[k].info.origin == SuggestionOrigin::Model));
    BOOST_TEST((capped[k].config == last_four[k].config));
    differs = differs || !(capped[k].config == every[k].config);
  }
  // Fantasising all 12 is a different model: the cap is what made the two equal.
  BOOST_TEST(differs);
}

// acquisition = "mean" (issue #43): a model trial takes the candidate the model believes
// best, so on a bowl its picks land nearer the optimum than expected improvement's, which
// still spends picks on what it is unsure of. Pending trials are fantasised at the
// observations' mean (a constant liar): four trials suggested at once go to four places,
// not four times to the model's best guess.
BOOST_AUTO_TEST_CASE(mobster_mean_acquisition_exploits_and_spreads_over_pending_trials) {
  const SearchSpace space(
      {{"x", ranged(DomainKind::Uniform, 0, 1)}, {"y", ranged(DomainKind::Uniform, 0, 1)}});
  const auto distance = [](const Configuration& c) {
    return std::hypot(as_number(c.values[0]) - 0.3, as_number(c.values[1]) - 0.7);
  };
  double mean_distance[2] = {0, 0};
  double closest_pair = 1;
  for (const auto acquisition : {Acquisition::ExpectedImprovement, Acquisition::Mean}) {
    auto spec = mobster_spec(5);
    spec.mobster.acquisition = acquisition;
    const auto s = make_suggester(space, spec, false, 11);
    const bool greedy = acquisition == Acquisition::Mean;
    for (TrialId t = 0; t < 30; ++t) {
      const auto sug = s->suggest(t);
      if (t >= 10) mean_distance[greedy] += distance(sug.config) / 20;
      s->reported(t, 1, std::pow(distance(sug.config), 2), at_rung(1, SchedulerDecision::Stop));
      s->ended(t, TrialEnd::Stopped);
    }
    if (!greedy) continue;
    std::vector<Configuration> batch;
    for (TrialId t = 30; t < 34; ++t)
      batch.push_back(s->suggest(t).config);
    for (std::size_t i = 0; i < batch.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        closest_pair =
            std::min(closest_pair,
                     std::hypot(as_number(batch[i].values[0]) - as_number(batch[j].values[0]),
                                as_number(batch[i].values[1]) - as_number(batch[j].values[1])));
  }
  // Measured: 0.101 against 0.021, and 0.099 apart (0.0096 with the model's own mean as
  // the pending trials' fantasies).
  BOOST_TEST(mean_distance[1] < mean_distance[0]);
  BOOST_TEST(closest_pair > 0.05);
}

// greedy_share (issue #64, item 4): each model trial's own coin says whether it takes the
// posterior mean or expected improvement. Suggesters that saw the same history (ended
// trials and pending ones) are asked about the same trial: the shared one's pick is, trial
// by trial, the greedy one's (pending trials fantasised as a constant liar) or expected
// improvement's (fantasised at the model's mean), and over 24 trials it is each about half
// the time. With a share of 1 every pick is the greedy one's.
BOOST_AUTO_TEST_CASE(mobster_greedy_share_takes_the_mean_on_a_share_of_model_trials) {
  const SearchSpace space(
      {{"x", ranged(DomainKind::Uniform, 0, 1)}, {"y", ranged(DomainKind::Uniform, 0, 1)}});
  const auto after_history = [&](Acquisition acquisition, double share) {
    auto spec = mobster_spec(5);
    spec.mobster.acquisition = acquisition;
    spec.mobster.greedy_share = share;
    auto s = make_suggester(space, spec, false, 21);
    Xoshiro256 rng(5);
    for (TrialId t = 0; t < 24; ++t) {
      const Configuration c{{ParamValue{rng.uniform01()}, ParamValue{rng.uniform01()}}};
      s->started(t, c);
      if (t >= 20) continue;  // the last four pending
      const double x = as_number(c.values[0]), y = as_number(c.values[1]);
      s->reported(t, 1, std::hypot(x - 0.3, y - 0.7), at_rung(1, SchedulerDecision::Stop));
      s->ended(t, TrialEnd::Stopped);
    }
    return s;
  };
  std::size_t greedy = 0, improvement = 0;
  for (TrialId t = 24; t < 48; ++t) {
    BOOST_TEST_CONTEXT("trial " << t) {
      const auto mean = after_history(Acquisition::Mean, 0)->suggest(t).config;
      const auto ei = after_history(Acquisition::ExpectedImprovement, 0)->suggest(t).config;
      BOOST_REQUIRE(!(mean == ei));
      const auto half = after_history(Acquisition::ExpectedImprovement, 0.5)->suggest(t);
      BOOST_TEST((half.info.origin == SuggestionOrigin::Model));
      greedy += half.config == mean;
      improvement += half.config == ei;
      BOOST_TEST((after_history(Acquisition::ExpectedImprovement, 1)->suggest(t).config == mean));
    }
  }
  BOOST_TEST(greedy + improvement == 24u);
  BOOST_TEST(greedy >= 6u);
  BOOST_TEST(improvement >= 6u);
}

// cost_exponent (issue #43): the loss depends on x alone, a step's seconds on w alone (1 s
// to 55 s). Expected improvement divided by the predicted seconds a step sends the model's
// trials to cheap steps; without it w is left to chance. x is found as well either way.
BOOST_AUTO_TEST_CASE(mobster_cost_exponent_prefers_configurations_with_cheap_steps) {
  const SearchSpace space(
      {{"x", ranged(DomainKind::Uniform, 0, 1)}, {"w", ranged(DomainKind::Uniform, 0, 1)}});
  double mean_w[2] = {0, 0}, mean_distance[2] = {0, 0};
  for (const double exponent : {0.0, 1.0}) {
    auto spec = mobster_spec(5);
    spec.mobster.cost_exponent = exponent;
    const auto s = make_suggester(space, spec, false, 12);
    const bool weighted = exponent > 0;
    double clock = 0;
    for (TrialId t = 0; t < 40; ++t) {
      const auto sug = s->suggest(t);
      const double x = as_number(sug.config.values[0]), w = as_number(sug.config.values[1]);
      if (t >= 10) {
        mean_w[weighted] += w / 30;
        mean_distance[weighted] += std::fabs(x - 0.3) / 30;
      }
      s->began_at(t, 0, clock);
      clock += std::exp(4.0 * w);
      s->reported_at(t, 1, clock);
      s->reported(t, 1, std::pow(x - 0.3, 2), at_rung(1, SchedulerDecision::Stop));
      s->ended(t, TrialEnd::Stopped);
    }
  }
  BOOST_TEST_MESSAGE("mean w " << mean_w[0] << " -> " << mean_w[1] << ", mean |x - 0.3| "
                               << mean_distance[0] << " -> " << mean_distance[1]);
  BOOST_TEST(mean_w[1] < 0.5 * mean_w[0]);
  BOOST_TEST(mean_distance[1] < 0.02);  // measured: 0.0020 without, 0.0021 with
}

namespace {

// Suggests trials 0 to count - 1, each stopped at rung 1 with its loss: their configurations.
std::vector<Configuration> judged_at_rung_one(
    Suggester& s, TrialId count, const std::function<double(const Configuration&)>& loss) {
  std::vector<Configuration> picks;
  for (TrialId t = 0; t < count; ++t) {
    const auto sug = s.suggest(t);
    picks.push_back(sug.config);
    s.reported(t, 1, loss(sug.config), at_rung(1, SchedulerDecision::Stop));
    s.ended(t, TrialEnd::Stopped);
  }
  return picks;
}

}  // namespace

// cost_cooling_s (issue #64, item 3; CArBO): the exponent falls from cost_exponent to 0
// over that many seconds of the recorded clock. Cooled over a horizon far longer than the
// study, the preference for cheap steps is what cost_exponent alone gives; once the
// horizon is over, the picks are expected improvement's alone, exactly.
BOOST_AUTO_TEST_CASE(mobster_cost_cooling_fades_the_preference_for_cheap_steps) {
  const SearchSpace space(
      {{"x", ranged(DomainKind::Uniform, 0, 1)}, {"w", ranged(DomainKind::Uniform, 0, 1)}});
  const auto run = [&](double exponent, double cooling_s) {
    auto spec = mobster_spec(5);
    spec.mobster.cost_exponent = exponent;
    spec.mobster.cost_cooling_s = cooling_s;
    const auto s = make_suggester(space, spec, false, 12);
    std::vector<Configuration> picks;
    double clock = 0;
    for (TrialId t = 0; t < 40; ++t) {
      const auto sug = s->suggest(t);
      picks.push_back(sug.config);
      const double x = as_number(sug.config.values[0]), w = as_number(sug.config.values[1]);
      s->began_at(t, 0, clock);
      clock += std::exp(4.0 * w);
      s->reported_at(t, 1, clock);
      s->reported(t, 1, std::pow(x - 0.3, 2), at_rung(1, SchedulerDecision::Stop));
      s->ended(t, TrialEnd::Stopped);
    }
    return picks;
  };
  const auto mean_w = [](const std::vector<Configuration>& picks) {
    double sum = 0;
    for (std::size_t t = 10; t < picks.size(); ++t)
      sum += as_number(picks[t].values[1]);
    return sum / static_cast<double>(picks.size() - 10);
  };
  const auto plain = run(0, 0), weighted = run(1, 0), long_cooling = run(1, 1e9),
             cooled = run(1, 0.5);
  BOOST_TEST_MESSAGE("mean w: plain " << mean_w(plain) << ", weighted " << mean_w(weighted)
                                      << ", cooling over 1e9 s " << mean_w(long_cooling));
  BOOST_TEST(mean_w(long_cooling) < 0.5 * mean_w(plain));
  // The first report comes a second or more after the first start: cooled by then.
  BOOST_REQUIRE_EQUAL(cooled.size(), plain.size());
  for (std::size_t t = 0; t < plain.size(); ++t)
    BOOST_TEST((cooled[t] == plain[t]));
}

// acquisition = "thompson" (issue #64, item 3): a model trial takes the best candidate of
// one joint draw of the posterior. On a bowl its picks close in on the optimum; four
// trials suggested at once, with no fantasies of the pending ones, go to four places, each
// drawn from its own stream; and the same seed gives the same picks.
BOOST_AUTO_TEST_CASE(mobster_thompson_draws_find_the_optimum_and_spread_a_wave) {
  const SearchSpace space(
      {{"x", ranged(DomainKind::Uniform, 0, 1)}, {"y", ranged(DomainKind::Uniform, 0, 1)}});
  const auto distance = [](const Configuration& c) {
    return std::hypot(as_number(c.values[0]) - 0.3, as_number(c.values[1]) - 0.7);
  };
  const auto run = [&] {
    auto spec = mobster_spec(5);
    spec.mobster.acquisition = Acquisition::Thompson;
    const auto s = make_suggester(space, spec, false, 11);
    auto picks = judged_at_rung_one(
        *s, 30, [&](const Configuration& c) { return std::pow(distance(c), 2); });
    for (TrialId t = 30; t < 34; ++t) {
      const auto sug = s->suggest(t);
      BOOST_TEST((sug.info.origin == SuggestionOrigin::Model));
      picks.push_back(sug.config);
    }
    return picks;
  };
  const auto picks = run();
  double mean_distance = 0;
  for (std::size_t t = 10; t < 30; ++t)
    mean_distance += distance(picks[t]) / 20;
  // Uniform draws lie 0.38 from (0.3, 0.7) on average.
  BOOST_TEST_MESSAGE("Thompson picks' mean distance " << mean_distance);
  BOOST_TEST(mean_distance < 0.15);
  for (std::size_t i = 30; i < 34; ++i)
    for (std::size_t j = 30; j < i; ++j)
      BOOST_TEST(!(picks[i] == picks[j]));
  const auto again = run();
  for (std::size_t t = 0; t < picks.size(); ++t)
    BOOST_TEST((again[t] == picks[t]));
}

// surrogate = "random-forest" (issue #64, item 3): expected improvement over a forest's
// mean and spread. On a bowl with a one-hot choice beside it, its picks close in on the
// optimum and take the choice the optimum has; the same seed gives the same picks.
BOOST_AUTO_TEST_CASE(mobster_random_forest_surrogate_finds_the_optimum) {
  const SearchSpace space(
      {{"x", ranged(DomainKind::Uniform, 0, 1)},
       {"y", ranged(DomainKind::Uniform, 0, 1)},
       {"opt",
        listed(DomainKind::Choice, {ParamValue{"sgd"}, ParamValue{"adam"}, ParamValue{"rms"}})}});
  const auto loss = [](const Configuration& c) {
    const double d = std::hypot(as_number(c.values[0]) - 0.3, as_number(c.values[1]) - 0.7);
    return d * d + (std::get<std::string>(c.values[2]) == "adam" ? 0.0 : 0.2);
  };
  const auto run = [&] {
    auto spec = mobster_spec(8);
    spec.mobster.surrogate = Surrogate::RandomForest;
    const auto s = make_suggester(space, spec, false, 13);
    return judged_at_rung_one(*s, 40, loss);
  };
  const auto picks = run();
  double mean_loss = 0;
  int adam = 0;
  for (std::size_t t = 20; t < 40; ++t) {
    mean_loss += loss(picks[t]) / 20;
    adam += std::get<std::string>(picks[t].values[2]) == "adam";
  }
  // Uniform draws: a mean loss of 0.31 (0.18 from the bowl, 0.13 from the choice), adam a
  // third. Measured: 0.132, adam 17 of 20 (a forest's steps place a bowl's floor coarsely).
  BOOST_TEST_MESSAGE("forest picks' mean loss " << mean_loss << ", adam " << adam << " of 20");
  BOOST_TEST(mean_loss < 0.2);
  BOOST_TEST(adam >= 14);
  const auto again = run();
  for (std::size_t t = 0; t < picks.size(); ++t)
    BOOST_TEST((again[t] == picks[t]));
}
