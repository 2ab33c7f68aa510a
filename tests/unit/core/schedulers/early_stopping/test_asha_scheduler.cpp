#define BOOST_TEST_MODULE core_asha_scheduler
#include <array>
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "core/schedulers/early_stopping/asha_scheduler.hpp"
#include "unit/core/schedulers/scheduler_fixture.hpp"

using namespace slurmtune::core;
using namespace slurmtune::core::testing;
namespace tt = boost::test_tools;

namespace {
AshaScheduler make(Mode mode, double max_t = 9, int brackets = 1, bool stop_last = true) {
  auto s = spec(SchedulerType::Asha, 1, 3, max_t);
  s.brackets = brackets;
  s.stop_last_trials = stop_last;
  return AshaScheduler(s, mode, 7);
}
}  // namespace

BOOST_AUTO_TEST_CASE(milestones_are_grace_times_powers_of_rf_up_to_max_t) {
  BOOST_TEST((make(Mode::Max, 9).milestones(0) == std::vector<double>{1, 3, 9}));
  BOOST_TEST((make(Mode::Max, 10).milestones(0) == std::vector<double>{1, 3, 9}));
  BOOST_TEST((make(Mode::Max, 81, 3).milestones(2) == std::vector<double>{9, 27, 81}));
}

BOOST_AUTO_TEST_CASE(stops_a_trial_strictly_below_the_hand_computed_cutoff) {
  auto s = make(Mode::Max);
  // Empty rung: continue, no cutoff.
  auto o = start_and_report(s, 0, 1, 1.0);
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
  BOOST_TEST(*o.rung == 0);
  BOOST_TEST(!o.cutoff);
  // Rung {1}: the 66.7th percentile of one value is that value.
  o = start_and_report(s, 1, 1, 2.0);
  BOOST_TEST(*o.cutoff == 1.0);
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
  // Rung {1, 2}: index 0.667 -> 1 + (2-1)*0.667 = 1.667.
  o = start_and_report(s, 2, 1, 3.0);
  BOOST_TEST(*o.cutoff == 5.0 / 3, tt::tolerance(1e-12));
  // Rung {1, 2, 3}: index 1.333 -> 2 + (3-2)*0.333 = 2.333; 1.5 is worse: stop.
  o = start_and_report(s, 3, 1, 1.5);
  BOOST_TEST(*o.cutoff == 7.0 / 3, tt::tolerance(1e-12));
  BOOST_TEST(o.decision == SchedulerDecision::Stop);
  // The stopped value still counts: rung {1, 1.5, 2, 3}, index 2.0 -> 2.
  o = start_and_report(s, 4, 1, 2.4);
  BOOST_TEST(*o.cutoff == 2.0, tt::tolerance(1e-12));
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
}

BOOST_AUTO_TEST_CASE(min_mode_compares_losses_the_other_way) {
  auto s = make(Mode::Min);
  for (TrialId t = 0; t < 3; ++t)
    start_and_report(s, t, 1, static_cast<double>(t + 1));
  // Losses {1, 2, 3} -> scores {-3, -2, -1}: cutoff score -1.667, i.e. loss 1.667.
  auto o = start_and_report(s, 3, 1, 1.7);
  BOOST_TEST(*o.cutoff == 5.0 / 3, tt::tolerance(1e-12));
  BOOST_TEST(o.decision == SchedulerDecision::Stop);
  o = start_and_report(s, 4, 1, 1.6);
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
}

BOOST_AUTO_TEST_CASE(a_tie_with_the_cutoff_continues) {
  auto s = make(Mode::Max);
  start_and_report(s, 0, 1, 5.0);
  BOOST_TEST(start_and_report(s, 1, 1, 5.0).decision == SchedulerDecision::Continue);
}

BOOST_AUTO_TEST_CASE(judges_one_rung_per_report_and_revisits_skipped_rungs) {
  auto s = make(Mode::Max, 100, 1, true);
  s.add_trial(0, std::nullopt);
  // First report at step 5: the highest milestone <= 5 is 3.
  auto o = s.report(0, 5, 1.0);
  BOOST_TEST(*o.milestone == 3.0);
  // Next report: rung 3 holds the trial, so the skipped rung 1 is judged now.
  o = s.report(0, 6, 1.0);
  BOOST_TEST(*o.milestone == 1.0);
  // Nothing left below 9: no rung.
  o = s.report(0, 7, 1.0);
  BOOST_TEST(!o.rung);
  o = s.report(0, 30, 1.0);
  BOOST_TEST(*o.milestone == 27.0);
}

BOOST_AUTO_TEST_CASE(stop_last_trials_stops_at_max_t_without_judging) {
  auto s = make(Mode::Max, 9);
  const auto o = start_and_report(s, 0, 9, 100.0);
  BOOST_TEST(o.decision == SchedulerDecision::Stop);
  BOOST_TEST(!o.rung);
  auto keep = make(Mode::Max, 9, 1, false);
  const auto k = start_and_report(keep, 0, 9, 100.0);
  BOOST_TEST(k.decision == SchedulerDecision::Continue);
  BOOST_TEST(*k.milestone == 9.0);
}

BOOST_AUTO_TEST_CASE(nan_is_ignored_by_the_cutoff_and_never_stops) {
  auto s = make(Mode::Max);
  start_and_report(s, 0, 1, std::nan(""));
  // Only NaN recorded: numpy's nanpercentile is NaN and nothing compares below it.
  auto o = start_and_report(s, 1, 1, -1e9);
  BOOST_TEST(std::isnan(*o.cutoff));
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
  // {NaN, -1e9}: the cutoff is taken over -1e9 alone.
  o = start_and_report(s, 2, 1, std::nan(""));
  BOOST_TEST(*o.cutoff == -1e9);
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
  o = start_and_report(s, 3, 1, -2e9);
  BOOST_TEST(o.decision == SchedulerDecision::Stop);
}

BOOST_AUTO_TEST_CASE(infinities_follow_numpy_interpolation) {
  auto s = make(Mode::Max);
  start_and_report(s, 0, 1, HUGE_VAL);
  // numpy: lerp(inf, inf, 0) = inf + (inf - inf) * 0 = NaN -> no stop.
  auto o = start_and_report(s, 1, 1, 5.0);
  BOOST_TEST(std::isnan(*o.cutoff));
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
  // {5, inf}: index 0.667 -> inf - inf * 0.333 = NaN as well.
  o = start_and_report(s, 2, 1, 6.0);
  BOOST_TEST(std::isnan(*o.cutoff));
  auto t = make(Mode::Max);
  start_and_report(t, 0, 1, -HUGE_VAL);
  start_and_report(t, 1, 1, 1.0);
  start_and_report(t, 2, 1, 2.0);
  // {-inf, 1, 2}: index 1.333 -> 1 + (2 - 1) * 0.333 = 1.333: -inf trials stop.
  o = start_and_report(t, 3, 1, -HUGE_VAL);
  BOOST_TEST(o.decision == SchedulerDecision::Stop);
}

BOOST_AUTO_TEST_CASE(a_completed_trial_records_its_last_value_like_a_report) {
  auto s = make(Mode::Max);
  s.add_trial(0, std::nullopt);
  s.end_trial(0, TrialEnd::Completed, Observation{1, 10.0});
  const auto o = start_and_report(s, 1, 1, 5.0);
  BOOST_TEST(*o.cutoff == 10.0);
  BOOST_TEST(o.decision == SchedulerDecision::Stop);
  // A failed trial's value is not recorded.
  auto f = make(Mode::Max);
  f.add_trial(0, std::nullopt);
  f.end_trial(0, TrialEnd::Failed, Observation{1, 10.0});
  BOOST_TEST(!start_and_report(f, 1, 1, 5.0).cutoff);
}

BOOST_AUTO_TEST_CASE(brackets_are_drawn_with_probability_proportional_to_exp_minus_s) {
  auto s = make(Mode::Max, 81, 3);
  std::array<int, 3> counts{};
  const int n = 30000;
  for (TrialId t = 0; t < n; ++t) {
    s.add_trial(t, std::nullopt);
    ++counts[static_cast<std::size_t>(s.bracket_of(t))];
  }
  const double z = 1 + std::exp(-1.0) + std::exp(-2.0);
  BOOST_TEST(counts[0] / double(n) == 1 / z, tt::tolerance(0.03));
  BOOST_TEST(counts[1] / double(n) == std::exp(-1.0) / z, tt::tolerance(0.05));
  BOOST_TEST(counts[2] / double(n) == std::exp(-2.0) / z, tt::tolerance(0.1));
  // Deterministic: the same seed draws the same brackets.
  auto again = make(Mode::Max, 81, 3);
  for (TrialId t = 0; t < 100; ++t) {
    again.add_trial(t, std::nullopt);
    BOOST_REQUIRE(again.bracket_of(t) == s.bracket_of(t));
  }
}

BOOST_AUTO_TEST_CASE(a_forced_bracket_uses_that_brackets_rungs) {
  auto s = make(Mode::Max, 81, 3);
  s.add_trial(0, 2);
  BOOST_TEST(s.report(0, 8, 1.0).rung.has_value() == false);
  BOOST_TEST(*s.report(0, 9, 1.0).milestone == 9.0);
  BOOST_CHECK_THROW(s.add_trial(1, 3), slurmtune::InputError);
}

BOOST_AUTO_TEST_CASE(explicit_milestones_replace_the_geometric_rungs) {
  auto sp = spec(SchedulerType::Asha, 1, 3, 100);
  sp.milestones = {2, 10, 50};
  AshaScheduler s(sp, Mode::Max, 0);
  BOOST_TEST((s.milestones(0) == std::vector<double>{2, 10, 50}));
  s.add_trial(0, std::nullopt);
  BOOST_TEST(!s.report(0, 1, 1.0).rung);
  BOOST_TEST(*s.report(0, 10, 1.0).milestone == 10.0);
}

BOOST_AUTO_TEST_CASE(a_report_from_an_unknown_trial_is_an_input_error) {
  auto s = make(Mode::Max);
  BOOST_CHECK_THROW(s.report(99, 1, 1.0), slurmtune::InputError);
}
