// `[sampler] prior` (src/core/search/gp/prior_region.cpp and MOBSTER's use of it): the
// good earlier configurations in successive halving's order, draws around them, MOBSTER's
// start-up and candidates from them, and a model that still finds the optimum when the
// earlier lesson is wrong.
#define BOOST_TEST_MODULE core_prior_region
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/search/gp/prior_region.hpp"
#include "core/search/sampler_spec.hpp"
#include "core/state_archive_io.hpp"
#include "core/study/suggester_factory.hpp"
#include "unit/core/search/gp/earlier_on_line.hpp"
#include "unit/core/search/suggester_testing.hpp"

using namespace slurmtune::core;
using namespace slurmtune::testing;
using slurmtune::core::gp::PriorRegion;

namespace {

// The earlier study of these tests: its best at `centre`, a little better at rung 3 there.
std::vector<PastTrial> earlier(double centre, std::size_t n = 40) {
  return earlier_on_line(centre, n);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_good_ones_in_successive_halvings_order) {
  const PriorRegion prior(kLine, earlier(0.3), false);
  // 15 % of 40 is 6: the 8 within 0.1 of 0.3 reached rung 3, so all 6 come from them,
  // the nearest first.
  BOOST_TEST(prior.good().size() == 6u);
  BOOST_TEST(std::fabs(x_of(prior.good()[0]) - 0.3) <= 0.0125 + 1e-12);
  for (const auto& c : prior.good())
    BOOST_TEST(std::fabs(x_of(c) - 0.3) < 0.1);
  BOOST_TEST(prior.bandwidths()[0] >= PriorRegion::kMinBandwidth);
  BOOST_TEST(prior.bandwidths()[0] <= PriorRegion::kMaxBandwidth);
  // Maximised, the order turns: the worst at rung 1 are far from 0.3 (the rung-3 trials,
  // judged higher, still come first).
  const PriorRegion flipped(kLine, earlier(0.3), true);
  BOOST_TEST(std::fabs(x_of(flipped.good()[0]) - 0.3) > 0.05);
}

BOOST_AUTO_TEST_CASE(draws_lie_around_the_good_ones) {
  const PriorRegion prior(kLine, earlier(0.3), false);
  Xoshiro256 rng(7);
  double distance = 0;
  for (int i = 0; i < 400; ++i) {
    const double x = x_of(prior.sample(rng));
    BOOST_TEST((x >= 0 && x < 1));
    distance += std::fabs(x - 0.3) / 400;
  }
  BOOST_TEST(distance < 0.12);  // uniform draws: 0.29 on average
}

BOOST_AUTO_TEST_CASE(a_choice_is_mostly_kept) {
  const SearchSpace space(
      {{"opt", listed(DomainKind::Choice, {ParamValue{"sgd"}, ParamValue{"adam"}, ParamValue{"rms"},
                                           ParamValue{"ada"}})}});
  std::vector<PastTrial> past;
  for (int i = 0; i < 10; ++i) {
    PastTrial t;
    t.config = Configuration({ParamValue{i < 6 ? "adam" : "sgd"}});
    t.last = std::pair{3.0, i < 6 ? 0.1 : 0.9};
    past.push_back(std::move(t));
  }
  const PriorRegion prior(space, past, false);
  Xoshiro256 rng(3);
  int adam = 0;
  for (int i = 0; i < 1000; ++i)
    adam += std::get<std::string>(prior.sample(rng).values[0]) == "adam";
  // The 5 good ones are all adam: kept 80 % of the time, redrawn to adam a quarter of the rest.
  BOOST_TEST(std::abs(adam - 850) < 50);
}

BOOST_AUTO_TEST_CASE(earlier_trials_without_a_value_are_refused) {
  std::vector<PastTrial> past(3);
  for (auto& t : past) {
    t.config = Configuration({ParamValue{0.5}});
    t.end = TrialEnd::Failed;
  }
  BOOST_CHECK_THROW(PriorRegion(kLine, past, false), slurmtune::InputError);
}

// trust_check_waiver = "lesson" (issue #64): each good configuration's share, at each rung
// the earlier study judged it at, of the other earlier trials judged there that beat it. A
// diverged value ranks below every number and leaves its own trial no lesson there.
BOOST_AUTO_TEST_CASE(each_good_one_s_lesson_is_its_standing_at_each_earlier_rung) {
  const auto trial = [](double x, std::vector<PastTrial::Judged> judged) {
    PastTrial t;
    t.config = Configuration({ParamValue{x}});
    t.judged = std::move(judged);
    t.end = TrialEnd::Stopped;
    return t;
  };
  const double nan = std::nan("");
  // Minimised. Rung 1: 4, 1, 3, 2, 5 and a diverged one; rung 3: trials 1 and 3.
  const std::vector<PastTrial> past{trial(0.0, {{1, 4, 1}}), trial(0.1, {{1, 1, 1}, {3, 0.5, 3}}),
                                    trial(0.2, {{1, 3, 1}}), trial(0.3, {{1, 2, 1}, {3, 0.4, 3}}),
                                    trial(0.4, {{1, 5, 1}}), trial(0.5, {{1, nan, 1}})};
  const PriorRegion prior(kLine, past, false);
  // The good set (at least 5): trials 3 and 1 (judged at rung 3), then 2, 0 and 4.
  BOOST_REQUIRE(prior.good().size() == 5u);
  BOOST_TEST(x_of(prior.good()[0]) == 0.3);
  const auto& lessons = prior.lessons();
  BOOST_REQUIRE(lessons.size() == 5u);
  const auto shares = [](const std::vector<RungLesson>& rungs) {
    std::vector<std::pair<double, double>> out;
    for (const auto& r : rungs)
      out.emplace_back(r.milestone, r.share_above);
    return out;
  };
  // Trial 3: one of five others beat it at rung 1 (the diverged one did not), none at rung 3.
  BOOST_TEST((shares(lessons[0]) == std::vector<std::pair<double, double>>{{1, 0.2}, {3, 0.0}}));
  // Trial 1: best at rung 1, beaten by trial 3 at rung 3 (its only other there).
  BOOST_TEST((shares(lessons[1]) == std::vector<std::pair<double, double>>{{1, 0.0}, {3, 1.0}}));
  BOOST_TEST((shares(lessons[2]) == std::vector<std::pair<double, double>>{{1, 0.4}}));
  BOOST_TEST((shares(lessons[4]) == std::vector<std::pair<double, double>>{{1, 0.8}}));
  // MOBSTER gives the scheduler the lessons of the trials it starts as they were.
  auto spec = mobster_spec(8);
  spec.prior = past;
  spec.mobster.prior_exact = 2;
  spec.prior_exact_named = true;
  const auto s = make_suggester(kLine, spec, false, 5);
  const auto given = s->trust_lessons();
  BOOST_REQUIRE(given.size() == 2u);
  BOOST_TEST((shares(given[0]) == shares(lessons[0])));
  BOOST_TEST((shares(given[1]) == shares(lessons[1])));
  BOOST_TEST(make_suggester(kLine, mobster_spec(8), false, 5)->trust_lessons().empty());
}

namespace {

// Sequential MOBSTER trials of one parameter, each judged at rung 1 by |x - optimum|;
// returns each trial's x.
std::vector<double> run_mobster(const std::vector<PastTrial>& prior, double optimum,
                                std::size_t trials, std::uint64_t seed = 5) {
  auto spec = mobster_spec(8);
  spec.prior = prior;
  const auto s = make_suggester(kLine, spec, false, seed);
  std::vector<double> xs;
  for (TrialId t = 0; t < trials; ++t) {
    const double x = x_of(s->suggest(t).config);
    xs.push_back(x);
    s->reported(t, 1, std::fabs(x - optimum), at_rung(1, SchedulerDecision::Stop));
    s->ended(t, TrialEnd::Stopped);
  }
  return xs;
}

}  // namespace

BOOST_AUTO_TEST_CASE(mobster_starts_where_the_earlier_study_did_best) {
  const auto prior = earlier(0.3);
  const PriorRegion region(kLine, prior, false);
  const auto xs = run_mobster(prior, 0.3, 8);
  for (std::size_t t = 0; t < 5; ++t)  // the best five as they were (prior_exact)
    BOOST_TEST(xs[t] == x_of(region.good()[t]));
  double distance = 0;
  for (const double x : xs)
    distance += std::fabs(x - 0.3) / 8;
  BOOST_TEST(distance < 0.15);
  BOOST_TEST(run_mobster(prior, 0.3, 12) == run_mobster(prior, 0.3, 12));  // a function of the seed
  BOOST_TEST(run_mobster(prior, 0.3, 12) != run_mobster(prior, 0.3, 12, 6));
}

BOOST_AUTO_TEST_CASE(mobster_recovers_when_the_earlier_lesson_is_wrong) {
  // The earlier study did best at 0.1; here the optimum is at 0.85. The start-ups are
  // spent near 0.1, and the model's later picks come as close to 0.85 as without a prior.
  const auto late_distance = [](const std::vector<double>& xs) {
    double distance = 0;
    for (std::size_t t = 25; t < xs.size(); ++t)
      distance += std::fabs(xs[t] - 0.85) / static_cast<double>(xs.size() - 25);
    return distance;
  };
  double with_prior = 0, without = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    with_prior += late_distance(run_mobster(earlier(0.1), 0.85, 40, seed));
    without += late_distance(run_mobster({}, 0.85, 40, seed));
  }
  BOOST_TEST_MESSAGE("late distance to the optimum: " << with_prior / 5 << " with the wrong "
                                                      << "prior, " << without / 5 << " without");
  BOOST_TEST(with_prior / 5 < 0.15);
  BOOST_TEST(with_prior < 1.5 * without);
}

BOOST_AUTO_TEST_CASE(a_first_wave_wider_than_prior_startup_is_uniform_past_it) {
  // 32 suggestions before any report (32 workers): all are start-ups. With prior_startup
  // = 8 the first 8 are the prior's (2 as they were, then its draws) and the rest those
  // that prior_share = 0 draws.
  const auto prior = earlier(0.3);
  const auto wave = [&prior](std::optional<std::size_t> startup, double share) {
    auto spec = mobster_spec(8);
    spec.prior = prior;
    spec.mobster.prior_exact = 2;
    spec.prior_exact_named = true;
    spec.mobster.prior_share = share;
    spec.mobster.prior_startup = startup;
    const auto s = make_suggester(kLine, spec, false, 5);
    std::vector<double> xs;
    for (TrialId t = 0; t < 32; ++t)
      xs.push_back(x_of(s->suggest(t).config));
    return xs;
  };
  const auto all = wave(std::nullopt, 1);
  const auto first_eight = wave(8, 1);
  const auto uniform = wave(std::nullopt, 0);
  for (std::size_t t = 0; t < 8; ++t)
    BOOST_TEST(first_eight[t] == all[t]);
  for (std::size_t t = 8; t < 32; ++t)
    BOOST_TEST(first_eight[t] == uniform[t]);
  double near = 0;  // the prior's own draws lie around 0.3, the uniform ones do not
  for (std::size_t t = 2; t < 8; ++t)
    near += std::fabs(first_eight[t] - 0.3) / 6;
  BOOST_TEST(near < 0.15);
}

namespace {

// prior_check: 10 start-ups before any report (2 as they were, then 8 that alternate
// between the prior's region and the whole space), each judged at rung 1 by |x - optimum|,
// then `more` start-ups of a wide first wave (n_startup_trials 40). With `round_trip`
// the suggester's state is written and read back into a new one after the reports.
std::vector<double> checked_wave(const std::vector<PastTrial>& prior, double optimum, bool check,
                                 double share, std::size_t more = 20, bool round_trip = false) {
  auto spec = mobster_spec(40);
  spec.prior = prior;
  spec.mobster.prior_exact = 2;
  spec.prior_exact_named = true;
  spec.mobster.prior_check = check;
  spec.mobster.prior_share = share;
  auto s = make_suggester(kLine, spec, false, 5);
  std::vector<double> xs;
  for (TrialId t = 0; t < 10; ++t)
    xs.push_back(x_of(s->suggest(t).config));
  for (TrialId t = 0; t < 10; ++t)
    s->reported(t, 1, std::fabs(xs[t] - optimum), at_rung(1, SchedulerDecision::Pause));
  if (round_trip) {
    std::ostringstream out;
    {
      StateOut archive(out);
      s->save_state(archive);
    }
    s = make_suggester(kLine, spec, false, 5);
    std::istringstream in(out.str());
    StateIn archive(in);
    s->load_state(archive);
  }
  for (TrialId t = 10; t < 10 + more; ++t)
    xs.push_back(x_of(s->suggest(t).config));
  return xs;
}

}  // namespace

BOOST_AUTO_TEST_CASE(prior_check_alternates_its_check_draws) {
  const auto xs = checked_wave(earlier(0.1), 0.85, true, 0.75, 0);
  double prior_half = 0, space_half = 0;
  for (std::size_t t = 2; t < 10; t += 2) {
    prior_half += std::fabs(xs[t] - 0.1) / 4;
    space_half += std::fabs(xs[t + 1] - 0.1) / 4;
  }
  BOOST_TEST_MESSAGE("check draws' mean distance to the prior's best: "
                     << prior_half << " from its region, " << space_half << " others");
  BOOST_TEST(prior_half < 0.15);
  BOOST_TEST(space_half > prior_half);
}

BOOST_AUTO_TEST_CASE(prior_check_stops_drawing_from_a_wrong_lesson) {
  // The earlier study did best at 0.1, the optimum is at 0.85: the prior's check draws do
  // worse at rung 1 than the others, so its share falls to 0 and the rest of the first
  // wave is what prior_share = 0 draws.
  const auto checked = checked_wave(earlier(0.1), 0.85, true, 0.75);
  const auto none = checked_wave(earlier(0.1), 0.85, true, 0.0);
  for (std::size_t t = 10; t < checked.size(); ++t)
    BOOST_TEST(checked[t] == none[t]);
  // Written and read back midway, the check's results come with the state.
  BOOST_TEST(checked_wave(earlier(0.1), 0.85, true, 0.75, 20, true) == checked);
}

BOOST_AUTO_TEST_CASE(prior_check_keeps_a_lesson_that_holds) {
  // The optimum is where the earlier study did best: the prior's check draws do better,
  // its share stays prior_share, and the draws after the check are those without it.
  const auto checked = checked_wave(earlier(0.3), 0.3, true, 0.75);
  const auto unchecked = checked_wave(earlier(0.3), 0.3, false, 0.75);
  for (std::size_t t = 10; t < checked.size(); ++t)
    BOOST_TEST(checked[t] == unchecked[t]);
  BOOST_TEST(checked_wave(earlier(0.3), 0.3, true, 0.75, 20, true) == checked);
}

// The first wave follows the trials run at once (issue #64, 2026-12-04): half of them as
// the earlier best were, at least kDefaultPriorExact, and the prior's draws 5 past those;
// keys the study file names stay, and a resolved spec is not resolved again.
BOOST_AUTO_TEST_CASE(the_prior_start_follows_the_trials_at_once) {
  const auto resolved = [](std::size_t at_once, std::optional<std::size_t> exact,
                           std::optional<std::size_t> startup) {
    SamplerSpec spec;
    spec.kind = SamplerKind::Mobster;
    spec.prior_files = {"earlier.h5"};
    spec.prior_exact_named = exact.has_value();
    spec.prior_startup_named = startup.has_value();
    if (exact) spec.mobster.prior_exact = *exact;
    spec.mobster.prior_startup = startup;
    resolve_prior_start(spec, at_once);
    return std::pair(spec.mobster.prior_exact, spec.mobster.prior_startup.value_or(0));
  };
  BOOST_TEST((resolved(8, {}, {}) == std::pair<std::size_t, std::size_t>(5, 10)));
  BOOST_TEST((resolved(1, {}, {}) == std::pair<std::size_t, std::size_t>(5, 10)));
  BOOST_TEST((resolved(32, {}, {}) == std::pair<std::size_t, std::size_t>(16, 21)));
  BOOST_TEST((resolved(33, {}, {}) == std::pair<std::size_t, std::size_t>(16, 21)));
  BOOST_TEST((resolved(32, 2, {}) == std::pair<std::size_t, std::size_t>(2, 10)));
  BOOST_TEST((resolved(32, {}, 7) == std::pair<std::size_t, std::size_t>(16, 7)));
  BOOST_TEST((resolved(32, 3, 4) == std::pair<std::size_t, std::size_t>(3, 4)));

  SamplerSpec spec;
  spec.kind = SamplerKind::Mobster;
  spec.prior_files = {"earlier.h5"};
  resolve_prior_start(spec, 32);
  resolve_prior_start(spec, 4);  // a resolved spec keeps its values
  BOOST_TEST(spec.mobster.prior_exact == 16u);
  BOOST_TEST(spec.mobster.prior_startup.value_or(0) == 21u);

  SamplerSpec without_prior;
  without_prior.kind = SamplerKind::Mobster;
  resolve_prior_start(without_prior, 32);
  BOOST_TEST(without_prior.mobster.prior_exact == kDefaultPriorExact);
  BOOST_TEST(!without_prior.mobster.prior_startup);
}
