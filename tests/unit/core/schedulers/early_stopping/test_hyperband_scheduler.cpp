#define BOOST_TEST_MODULE core_hyperband_scheduler
#include <algorithm>
#include <boost/test/unit_test.hpp>

#include "core/schedulers/early_stopping/hyperband_scheduler.hpp"
#include "unit/core/schedulers/scheduler_fixture.hpp"

using namespace slurmtune::core;
using namespace slurmtune::core::testing;

namespace {
HyperbandScheduler make() {
  return HyperbandScheduler(spec(SchedulerType::Hyperband, 1, 3, 9), Mode::Max);
}
}  // namespace

BOOST_AUTO_TEST_CASE(bracket_sizes_and_budgets_follow_li_et_al) {
  const auto s = make();                // s_max = 2
  BOOST_TEST(s.bracket_size(2) == 9U);  // ceil(3/3 * 9)
  BOOST_TEST(s.bracket_size(1) == 5U);  // ceil(3/2 * 3)
  BOOST_TEST(s.bracket_size(0) == 3U);  // ceil(3/1 * 1)
  BOOST_TEST(s.rung_budget(2, 0) == 1.0);
  BOOST_TEST(s.rung_budget(2, 1) == 3.0);
  BOOST_TEST(s.rung_budget(1, 0) == 3.0);
  BOOST_TEST(s.rung_budget(0, 0) == 9.0);
}

BOOST_AUTO_TEST_CASE(halves_a_bracket_only_when_every_trial_reached_the_rung) {
  auto s = make();
  for (TrialId t = 0; t < 9; ++t) {
    BOOST_TEST((s.next_job(true)->kind == Job::Kind::Start));
    s.add_trial(t, std::nullopt);
    BOOST_TEST(s.bracket_of(t) == 0);
  }
  for (TrialId t = 0; t < 8; ++t) {
    BOOST_TEST(s.report(t, 1, static_cast<double>(t)).decision == SchedulerDecision::Pause);
    BOOST_TEST(!s.next_job(false));  // the bracket waits for its last trial
  }
  s.report(8, 1, 8.0);
  // Top floor(9/3) = 3 resume at budget 3; the other six are dropped.
  std::vector<TrialId> resumed;
  while (const auto job = s.next_job(false)) {
    BOOST_TEST((job->kind == Job::Kind::Resume));
    BOOST_TEST(job->until == 3.0);
    resumed.push_back(job->trial);
  }
  BOOST_TEST((resumed == std::vector<TrialId>{8, 7, 6}));
  auto dropped = s.take_dropped();
  std::sort(dropped.begin(), dropped.end());
  BOOST_TEST((dropped == std::vector<TrialId>{0, 1, 2, 3, 4, 5}));
  // The next new trial opens bracket s = 1 (budget 3).
  BOOST_TEST(s.next_job(true)->until == 3.0);
  s.add_trial(9, std::nullopt);
  BOOST_TEST(s.bracket_of(9) == 1);
  BOOST_TEST(s.bracket_s(1) == 1);
}

BOOST_AUTO_TEST_CASE(the_last_rung_runs_to_max_t) {
  auto s = make();
  for (TrialId t = 0; t < 9; ++t)
    s.add_trial(t, std::nullopt);
  for (TrialId t = 0; t < 9; ++t)
    s.report(t, 1, static_cast<double>(t));
  for (int k = 0; k < 3; ++k) {
    const auto job = s.next_job(false);
    BOOST_TEST(s.report(job->trial, 3, static_cast<double>(job->trial)).decision ==
               SchedulerDecision::Pause);
  }
  const auto job = s.next_job(false);
  BOOST_TEST(job->trial == 8U);
  BOOST_TEST(job->until == 9.0);
  BOOST_TEST(s.report(8, 5, 8.0).decision == SchedulerDecision::Continue);
  BOOST_TEST(s.report(8, 9, 8.0).decision == SchedulerDecision::Stop);
}

BOOST_AUTO_TEST_CASE(a_failed_trial_does_not_hold_up_its_bracket) {
  auto s = make();
  for (TrialId t = 0; t < 9; ++t)
    s.add_trial(t, std::nullopt);
  for (TrialId t = 0; t < 8; ++t)
    s.report(t, 1, static_cast<double>(t));
  s.end_trial(8, TrialEnd::Failed, std::nullopt);
  // Eight arrived: keep floor(8/3) = 2.
  BOOST_TEST(s.next_job(false)->trial == 7U);
  BOOST_TEST(s.next_job(false)->trial == 6U);
  BOOST_TEST(!s.next_job(false));
}

BOOST_AUTO_TEST_CASE(closing_admissions_halves_a_partial_bracket) {
  auto s = make();
  for (TrialId t = 0; t < 4; ++t) {
    s.add_trial(t, std::nullopt);
    s.report(t, 1, static_cast<double>(t));
  }
  BOOST_TEST(!s.next_job(false));
  s.close_admissions();
  BOOST_TEST(s.next_job(false)->trial == 3U);  // max(1, floor(4/3)) = 1
  BOOST_TEST(s.take_dropped().size() == 3U);
}
