#define BOOST_TEST_MODULE core_asha_promotion_scheduler
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "core/schedulers/early_stopping/asha_promotion_scheduler.hpp"
#include "unit/core/schedulers/scheduler_fixture.hpp"

using namespace slurmtune::core;
using namespace slurmtune::core::testing;

namespace {
AshaPromotionScheduler make() {
  return AshaPromotionScheduler(spec(SchedulerType::AshaPromotion, 1, 3, 9), Mode::Max);
}
}  // namespace

BOOST_AUTO_TEST_CASE(starts_new_trials_while_nothing_is_promotable) {
  auto s = make();
  const auto job = s.next_job(true);
  BOOST_TEST((job->kind == Job::Kind::Start));
  BOOST_TEST(job->until == 1.0);
  BOOST_TEST(!s.next_job(false));
}

BOOST_AUTO_TEST_CASE(pauses_at_each_rung_and_promotes_the_top_third) {
  auto s = make();
  for (TrialId t = 0; t < 3; ++t) {
    s.add_trial(t, std::nullopt);
    BOOST_TEST(s.report(t, 0.5, 0.0).decision == SchedulerDecision::Continue);
    const auto o = s.report(t, 1, static_cast<double>(t + 1));
    BOOST_TEST(o.decision == SchedulerDecision::Pause);
    BOOST_TEST(*o.rung == 0);
  }
  // Rung 0 = {1, 2, 3}: floor(3/3) = 1 promotion slot, taken by trial 2.
  auto job = s.next_job(true);
  BOOST_TEST((job->kind == Job::Kind::Resume));
  BOOST_TEST(job->trial == 2U);
  BOOST_TEST(job->until == 3.0);
  // Trial 1 is second: not in the top third of three.
  BOOST_TEST((s.next_job(true)->kind == Job::Kind::Start));
  BOOST_TEST(!s.next_job(false));
  // Three more trials, all worse than trial 1: six in the rung, two slots.
  for (TrialId t = 3; t < 6; ++t) {
    s.add_trial(t, std::nullopt);
    s.report(t, 1, 0.0);
  }
  job = s.next_job(false);
  BOOST_TEST(job->trial == 1U);
}

BOOST_AUTO_TEST_CASE(prefers_the_highest_rung_with_a_promotable_trial) {
  auto s = make();
  for (TrialId t = 0; t < 9; ++t) {
    s.add_trial(t, std::nullopt);
    s.report(t, 1, static_cast<double>(t));
  }
  // Promote trials 8, 7, 6 out of rung 0 and pause them at rung 1 (budget 3).
  for (int k = 0; k < 3; ++k) {
    const auto job = s.next_job(false);
    BOOST_REQUIRE(job);
    BOOST_TEST(s.report(job->trial, 3, static_cast<double>(job->trial)).decision ==
               SchedulerDecision::Pause);
  }
  const auto job = s.next_job(false);
  BOOST_TEST(job->trial == 8U);  // rung 1's best goes first
  BOOST_TEST(job->until == 9.0);
  // The top rung completes the trial.
  BOOST_TEST(s.report(8, 9, 8.0).decision == SchedulerDecision::Stop);
}

BOOST_AUTO_TEST_CASE(ties_promote_the_earlier_trial) {
  auto s = make();
  for (TrialId t = 0; t < 3; ++t) {
    s.add_trial(t, std::nullopt);
    s.report(t, 1, 1.0);
  }
  BOOST_TEST(s.next_job(false)->trial == 0U);
}

BOOST_AUTO_TEST_CASE(drops_paused_trials_only_when_the_study_is_quiescent) {
  auto s = make();
  for (TrialId t = 0; t < 3; ++t)
    s.add_trial(t, std::nullopt);
  s.report(0, 1, 1.0);
  s.report(1, 1, 2.0);
  s.close_admissions();
  BOOST_TEST(s.take_dropped().empty());  // trial 2 still runs and could lift trial 1
  s.end_trial(2, TrialEnd::Failed, std::nullopt);
  // Rung {1, 2}: floor(2/3) = 0 slots; nothing runs, nothing can arrive.
  const auto dropped = s.take_dropped();
  BOOST_TEST((dropped == std::vector<TrialId>{0, 1}));
  BOOST_TEST(s.take_dropped().empty());
}

namespace {

// Rungs 3, 9, 27 for a loss (Mode::Min), with learning-curve prediction on: a trial has
// three reports when it is first judged.
AshaPromotionScheduler predicting() {
  auto s = spec(SchedulerType::AshaPromotion, 3, 3, 27);
  s.predict = true;
  return AshaPromotionScheduler(s, Mode::Min);
}

// A power law ending near `floor` at step 27.
double loss_curve(double floor, double step) {
  return floor + 0.5 * std::pow(step, -0.8);
}

// Reports `from`..`to` of a trial; returns the outcome at `to`.
ReportOutcome run_to(AshaPromotionScheduler& s, TrialId t, double floor, int from, int to) {
  ReportOutcome last;
  for (int step = from; step <= to; ++step)
    last = s.report(t, step, loss_curve(floor, step));
  return last;
}

}  // namespace

BOOST_AUTO_TEST_CASE(predicted_winners_run_on_and_predicted_losers_stop) {
  auto s = predicting();
  // Trial 0: the first prediction leads and nothing has finished: it runs on through
  // rungs 3 and 9 without pausing, and its final report is the incumbent.
  s.add_trial(0, std::nullopt);
  auto o = run_to(s, 0, 0.2, 1, 3);
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
  BOOST_REQUIRE(o.prediction.has_value());
  BOOST_TEST(o.prediction->at == 27.0);
  BOOST_TEST(o.prediction->lower <= o.prediction->mean);
  BOOST_TEST(o.prediction->mean <= o.prediction->upper);
  BOOST_TEST(std::fabs(o.prediction->mean - loss_curve(0.2, 27)) < 0.1);
  BOOST_TEST(run_to(s, 0, 0.2, 4, 9).decision == SchedulerDecision::Continue);
  BOOST_TEST(run_to(s, 0, 0.2, 10, 27).decision == SchedulerDecision::Stop);  // top rung

  // Trial 1 heads for 1.0, far above the incumbent ~0.2: stopped at rung 3, not paused.
  s.add_trial(1, std::nullopt);
  o = run_to(s, 1, 1.0, 1, 3);
  BOOST_TEST(o.decision == SchedulerDecision::Stop);
  BOOST_TEST(o.prediction->mean > 0.9);

  // Trial 2 heads for 0.05, clearly below: it runs on at rung 3 (no pause).
  s.add_trial(2, std::nullopt);
  BOOST_TEST(run_to(s, 2, 0.05, 1, 3).decision == SchedulerDecision::Continue);
  // Trial 3 heads for 0.1: better than the incumbent but not than trial 2's prediction,
  // and not clearly worse than the incumbent: it pauses, as without prediction.
  s.add_trial(3, std::nullopt);
  BOOST_TEST(run_to(s, 3, 0.1, 1, 3).decision == SchedulerDecision::Pause);

  // The same reports give the same predictions (replay and resume decide alike).
  auto again = predicting();
  again.add_trial(0, std::nullopt);
  auto first = predicting();
  first.add_trial(0, std::nullopt);
  BOOST_TEST((run_to(first, 0, 0.2, 1, 3).prediction == run_to(again, 0, 0.2, 1, 3).prediction));
}

BOOST_AUTO_TEST_CASE(without_predict_the_same_trial_pauses) {
  AshaPromotionScheduler plain(spec(SchedulerType::AshaPromotion, 3, 3, 27), Mode::Min);
  plain.add_trial(0, std::nullopt);
  const auto o = run_to(plain, 0, 0.2, 1, 3);
  BOOST_TEST(o.decision == SchedulerDecision::Pause);
  BOOST_TEST(!o.prediction.has_value());
}

// eager_promotion (issue #43): while a rung holds fewer than eta (3) trials it promotes
// nothing, so a trial that reports the best value yet seen there runs on instead of
// pausing; the first trial goes to max_t at once. Once the rung holds eta trials, the rule
// is promotion's again: a new best pauses and waits for a worker.
BOOST_AUTO_TEST_CASE(eager_promotion_runs_a_short_rungs_leader_on) {
  auto eager_spec = spec(SchedulerType::AshaPromotion, 1, 3, 9);
  eager_spec.eager_promotion = true;
  AshaPromotionScheduler s(eager_spec, Mode::Max);
  s.add_trial(0, std::nullopt);
  BOOST_TEST(s.report(0, 1, 5.0).decision == SchedulerDecision::Continue);  // alone at rung 0
  BOOST_TEST(s.report(0, 3, 5.0).decision == SchedulerDecision::Continue);  // alone at rung 1
  BOOST_TEST(s.report(0, 9, 5.0).decision == SchedulerDecision::Stop);      // max_t
  s.add_trial(1, std::nullopt);
  BOOST_TEST(s.report(1, 1, 4.0).decision == SchedulerDecision::Pause);  // behind trial 0
  s.add_trial(2, std::nullopt);
  BOOST_TEST(s.report(2, 1, 6.0).decision == SchedulerDecision::Pause);  // best, but 3 in the rung
  s.add_trial(3, std::nullopt);
  BOOST_TEST(s.report(3, 1, std::nan("")).decision == SchedulerDecision::Pause);
  // The rung's ranking still counts the leader that ran on: {6, 5, 4, NaN}, one slot, trial 2.
  BOOST_TEST(s.next_job(false)->trial == 2U);
  // A diverged first report never leads a short rung.
  AshaPromotionScheduler fresh(eager_spec, Mode::Max);
  fresh.add_trial(0, std::nullopt);
  BOOST_TEST(fresh.report(0, 1, std::nan("")).decision == SchedulerDecision::Pause);
}
