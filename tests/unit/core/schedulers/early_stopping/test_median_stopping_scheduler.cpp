#define BOOST_TEST_MODULE core_median_stopping_scheduler
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "core/schedulers/early_stopping/median_stopping_scheduler.hpp"
#include "unit/core/schedulers/scheduler_fixture.hpp"

using namespace slurmtune::core;
using namespace slurmtune::core::testing;

namespace {
MedianStoppingScheduler make(Mode mode = Mode::Max) {
  auto s = spec(SchedulerType::Median, 1, 3, 100);
  s.min_samples_required = 3;
  return MedianStoppingScheduler(s, mode);
}
void run_constant(Scheduler& s, TrialId t, double value, int steps) {
  s.add_trial(t, std::nullopt);
  for (int step = 1; step <= steps; ++step)
    s.report(t, step, value);
}
}  // namespace

BOOST_AUTO_TEST_CASE(stops_a_trial_whose_best_is_below_the_median_running_average) {
  auto s = make();
  run_constant(s, 0, 1.0, 3);
  run_constant(s, 1, 2.0, 3);
  run_constant(s, 2, 3.0, 3);
  s.add_trial(3, std::nullopt);
  // At the grace period itself no trial is stopped.
  BOOST_TEST(s.report(3, 1, 0.5).decision == SchedulerDecision::Continue);
  // Step 2: the others' running averages are {1, 2, 3}; median 2; best 0.5 < 2.
  const auto o = s.report(3, 2, 0.5);
  BOOST_TEST(o.decision == SchedulerDecision::Stop);
  BOOST_TEST(*o.cutoff == 2.0);
}

BOOST_AUTO_TEST_CASE(continues_with_too_few_other_trials) {
  auto s = make();
  run_constant(s, 0, 1.0, 3);
  run_constant(s, 1, 2.0, 3);
  s.add_trial(2, std::nullopt);
  s.report(2, 1, 0.0);
  const auto o = s.report(2, 2, 0.0);
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
  BOOST_TEST(!o.cutoff);
}

BOOST_AUTO_TEST_CASE(an_even_number_of_trials_averages_the_middle_pair) {
  auto s = make(Mode::Min);
  for (TrialId t = 0; t < 4; ++t)
    run_constant(s, t, static_cast<double>(t + 1), 2);
  s.add_trial(9, std::nullopt);
  s.report(9, 1, 2.4);
  // Losses {1, 2, 3, 4}: median 2.5; the best loss 2.4 beats it.
  const auto o = s.report(9, 2, 2.6);
  BOOST_TEST(*o.cutoff == 2.5);
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
}

BOOST_AUTO_TEST_CASE(a_nan_running_average_makes_the_median_nan_and_never_stops) {
  auto s = make();
  run_constant(s, 0, 1.0, 2);
  run_constant(s, 1, std::nan(""), 2);
  run_constant(s, 2, 3.0, 2);
  s.add_trial(3, std::nullopt);
  s.report(3, 1, -5.0);
  BOOST_TEST(s.report(3, 2, -5.0).decision == SchedulerDecision::Continue);
}
