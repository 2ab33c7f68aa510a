#define BOOST_TEST_MODULE core_asha_promotion_scheduler
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <memory>

#include "core/schedulers/early_stopping/asha_promotion_scheduler.hpp"
#include "core/schedulers/rung_ladder.hpp"
#include "unit/core/schedulers/scheduler_fixture.hpp"

using namespace slurmtune::core;
using namespace slurmtune::core::testing;

namespace {
AshaPromotionScheduler make() {
  return AshaPromotionScheduler(spec(SchedulerType::AshaPromotion, 1, 3, 9), Mode::Max);
}

// trust_check_waiver's cases: trials 0 and 1 of 10 trusted and checked.
std::unique_ptr<AshaPromotionScheduler> trusting(TrustWaiver waiver, std::int64_t from_rung) {
  auto checking = spec(SchedulerType::AshaPromotion, 1, 3, 27);
  checking.trusted_trials = 2;
  checking.trust_check = true;
  checking.trust_check_waiver = waiver;
  checking.trust_check_waiver_from_rung = from_rung;
  auto s = std::make_unique<AshaPromotionScheduler>(checking, Mode::Max);
  for (TrialId t = 0; t < 10; ++t)
    s->add_trial(t, std::nullopt);
  return s;
}

// Trials 2 to 9 fill rung 0 with {2, ..., 9}.
void fill_rung_0(AshaPromotionScheduler& s) {
  for (TrialId t = 2; t < 10; ++t)
    s.report(t, 1, static_cast<double>(t));
}

// Rung 0 filled before the trusted trials report there.
std::unique_ptr<AshaPromotionScheduler> trusting_with_rung_0_filled(TrustWaiver waiver,
                                                                    std::int64_t from_rung = 0) {
  auto s = trusting(waiver, from_rung);
  fill_rung_0(*s);
  return s;
}

// Promotes rung 0's top third (trials 7, 8, 9) and reports them at rung 1 with 7.4, 8.6
// and 9.5: gains of 0.4, 0.6 and 0.5, and no one passed.
void promote_top_third_to_rung_1(AshaPromotionScheduler& s) {
  const double at_rung_1[] = {7.4, 8.6, 9.5};
  for (int i = 0; i < 3; ++i) {
    const auto job = s.next_job(false);
    BOOST_REQUIRE(job.has_value());
    BOOST_REQUIRE(job->trial >= 7U);
    s.report(job->trial, 3, at_rung_1[job->trial - 7]);
  }
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

BOOST_AUTO_TEST_CASE(the_end_game_runs_the_best_paused_trial_to_max_t_then_drops_the_rest) {
  auto s = make();
  for (TrialId t = 0; t < 3; ++t)
    s.add_trial(t, std::nullopt);
  s.report(0, 1, 1.0);
  s.report(1, 1, 2.0);
  s.close_admissions();
  BOOST_TEST(s.take_dropped().empty());  // trial 2 still runs and could lift trial 1
  s.end_trial(2, TrialEnd::Failed, std::nullopt);
  // Rung {1, 2}: floor(2/3) = 0 slots, so the rule promotes nothing; nothing runs and
  // nothing can arrive. The end game resumes the best (trial 1) instead of dropping it.
  BOOST_TEST(s.take_dropped().empty());
  const auto job = s.next_job(false);
  BOOST_REQUIRE(job);
  BOOST_TEST((job->kind == Job::Kind::Resume));
  BOOST_TEST(job->trial == 1U);
  // It runs on past rung 3 without pausing, to max_t.
  BOOST_TEST(s.report(1, 3, 2.5).decision == SchedulerDecision::Continue);
  BOOST_TEST(s.report(1, 9, 3.0).decision == SchedulerDecision::Stop);
  s.end_trial(1, TrialEnd::Completed, Observation{9, 3.0});
  // A finisher reached max_t: the end game is over and trial 0's wait with it.
  BOOST_TEST(!s.next_job(false));
  BOOST_TEST((s.take_dropped() == std::vector<TrialId>{0}));
  BOOST_TEST(s.take_dropped().empty());
}

BOOST_AUTO_TEST_CASE(the_end_game_picks_from_the_highest_rung_first_one_per_free_worker) {
  auto s = make();
  for (TrialId t = 0; t < 4; ++t)
    s.add_trial(t, std::nullopt);
  for (TrialId t = 0; t < 4; ++t)
    s.report(t, 1, static_cast<double>(t));
  // Rung 1 holds 4: its top third (trial 3) is promoted and pauses at rung 3.
  const auto promoted = s.next_job(false);
  BOOST_REQUIRE(promoted);
  BOOST_TEST(promoted->trial == 3U);
  BOOST_TEST(s.report(3, 3, 5.0).decision == SchedulerDecision::Pause);
  s.close_admissions();
  // Two free workers: trial 3 (rung 3) first, then the best left at rung 1 (trial 2).
  const auto first = s.next_job(false);
  const auto second = s.next_job(false);
  BOOST_REQUIRE(first);
  BOOST_REQUIRE(second);
  BOOST_TEST(first->trial == 3U);
  BOOST_TEST(first->until == 9.0);
  BOOST_TEST(second->trial == 2U);
  BOOST_TEST(s.report(2, 3, 4.0).decision == SchedulerDecision::Continue);
}

BOOST_AUTO_TEST_CASE(max_t_off_the_geometric_ladder_is_the_top_rung) {
  // grace 1, rf 3, max_t 20: 1, 3, 9 and then 20, where a trial has run its course.
  AshaPromotionScheduler s(spec(SchedulerType::AshaPromotion, 1, 3, 20), Mode::Max);
  BOOST_TEST(s.max_resource() == 20.0);
  s.add_trial(0, std::nullopt);
  BOOST_TEST(s.report(0, 9, 1.0).decision == SchedulerDecision::Pause);  // not the end
  s.add_trial(1, std::nullopt);
  BOOST_TEST(s.report(1, 20, 1.0).decision == SchedulerDecision::Stop);
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

// trusted_trials (issue #64): the first N trials (a prior's earlier best, [[enqueue]]
// entries) run to max_t whatever they report on the way, and still enter each rung's
// ranking; the trials after them pause as before.
BOOST_AUTO_TEST_CASE(trusted_trials_run_to_max_t_and_still_rank_in_their_rungs) {
  auto trusting = spec(SchedulerType::AshaPromotion, 1, 3, 9);
  trusting.trusted_trials = 2;
  AshaPromotionScheduler s(trusting, Mode::Max);
  for (TrialId t = 0; t < 4; ++t)
    s.add_trial(t, std::nullopt);
  // Trusted trials 0 and 1 report the rung's worst values and run on, NaN included.
  BOOST_TEST(s.report(0, 1, 1.0).decision == SchedulerDecision::Continue);
  BOOST_TEST(s.report(1, 1, std::nan("")).decision == SchedulerDecision::Continue);
  BOOST_TEST(s.report(2, 1, 5.0).decision == SchedulerDecision::Pause);
  BOOST_TEST(s.report(3, 1, 4.0).decision == SchedulerDecision::Pause);
  // Rung 0 ranks {5, 4, 1, NaN}: one slot, taken by trial 2; trial 3 waits.
  const auto job = s.next_job(false);
  BOOST_TEST(job->trial == 2U);
  BOOST_TEST(!s.next_job(false));
  BOOST_TEST(s.report(0, 3, 2.0).decision == SchedulerDecision::Continue);
  const auto top = s.report(0, 9, 3.0);
  BOOST_TEST(top.decision == SchedulerDecision::Stop);  // max_t: its full course
  BOOST_TEST(*top.rung == 2);
  // The same study without trust pauses trial 0 at the first rung.
  auto plain = make();
  plain.add_trial(0, std::nullopt);
  BOOST_TEST(plain.report(0, 1, 1.0).decision == SchedulerDecision::Pause);
}

// trust_check (issue #64): a trusted trial keeps its trust while it is not in the worse
// half of a rung it passed. The first wave reaches the first rung together, so the rung is
// judged again at the trial's next rung, once it has filled; a slow starter in the better
// half keeps its trust, a bad one loses it there and is judged as any trial.
BOOST_AUTO_TEST_CASE(trust_check_ends_the_trust_of_a_trial_in_a_passed_rungs_worse_half) {
  auto checking = spec(SchedulerType::AshaPromotion, 1, 3, 27);
  checking.trusted_trials = 2;
  checking.trust_check = true;
  AshaPromotionScheduler s(checking, Mode::Max);
  for (TrialId t = 0; t < 8; ++t)
    s.add_trial(t, std::nullopt);
  // Alone at rung 0 (fewer than 3 others there), both run on whatever they report.
  BOOST_TEST(s.report(0, 1, 1.0).decision == SchedulerDecision::Continue);
  BOOST_TEST(s.report(1, 1, 5.0).decision == SchedulerDecision::Continue);
  // Six more fill rung 0: {9, 8, 7, 5, 4, 3, 2, 1}.
  const double values[] = {2.0, 3.0, 4.0, 7.0, 8.0, 9.0};
  for (TrialId t = 2; t < 8; ++t)
    BOOST_TEST(s.report(t, 1, values[t - 2]).decision == SchedulerDecision::Pause);
  // At rung 1, rung 0 is judged again. Trial 1 (4th of 8: 3 of the 7 others above it)
  // keeps its trust; trial 0 (last: 7 of 7 above) loses it and pauses at rung 1.
  BOOST_TEST(s.report(1, 3, 6.0).decision == SchedulerDecision::Continue);
  BOOST_TEST(s.report(0, 3, 6.5).decision == SchedulerDecision::Pause);
  BOOST_TEST(s.report(1, 9, 6.0).decision == SchedulerDecision::Continue);  // still trusted
  // The trust does not come back: resumed, trial 0 pauses at rung 2 like any trial, even
  // with that rung's best value.
  BOOST_TEST((s.resume(0).kind == Job::Kind::Resume));
  BOOST_TEST(s.report(0, 9, 10.0).decision == SchedulerDecision::Pause);
  // Without trust_check the same trial 0 runs on.
  checking.trust_check = false;
  AshaPromotionScheduler plain(checking, Mode::Max);
  for (TrialId t = 0; t < 8; ++t)
    plain.add_trial(t, std::nullopt);
  BOOST_TEST(plain.report(0, 1, 1.0).decision == SchedulerDecision::Continue);
  for (TrialId t = 2; t < 8; ++t)
    plain.report(t, 1, values[t - 2]);
  BOOST_TEST(plain.report(0, 3, 6.5).decision == SchedulerDecision::Continue);
}

// trust_check_above (issue #64): the share of a passed rung's others that must rank above
// a trusted trial to end its trust. With 4 of 7 above it, the worse half (0.5) ends the
// trust and the worst quarter (0.75) keeps it.
BOOST_AUTO_TEST_CASE(trust_check_above_sets_the_rank_that_ends_a_trust) {
  auto checking = spec(SchedulerType::AshaPromotion, 1, 3, 27);
  checking.trusted_trials = 1;
  checking.trust_check = true;
  const auto decision_at_rung_1 = [&checking](double above) {
    checking.trust_check_above = above;
    AshaPromotionScheduler s(checking, Mode::Max);
    for (TrialId t = 0; t < 8; ++t)
      s.add_trial(t, std::nullopt);
    BOOST_TEST(s.report(0, 1, 4.5).decision == SchedulerDecision::Continue);
    // Rung 0: {9, 8, 7, 5, 4.5, 4, 3, 2}: 4 of trial 0's 7 others rank above it.
    const double values[] = {2.0, 3.0, 4.0, 5.0, 7.0, 8.0, 9.0};
    for (TrialId t = 1; t < 8; ++t)
      s.report(t, 1, values[t - 1]);
    return s.report(0, 3, 6.0).decision;
  };
  BOOST_TEST((decision_at_rung_1(kDefaultTrustCheckAbove) == SchedulerDecision::Pause));
  BOOST_TEST((decision_at_rung_1(0.75) == SchedulerDecision::Continue));
  // 4 > 0.5 * 7 ends it; 4 > 0.57 * 7 (3.99) still does, 4 > 0.58 * 7 (4.06) does not.
  BOOST_TEST((decision_at_rung_1(0.57) == SchedulerDecision::Pause));
  BOOST_TEST((decision_at_rung_1(0.58) == SchedulerDecision::Continue));
}

// trust_check_waiver = "gain" (issue #64): a low rank ends a trust only if the trial gains no
// faster than its peers. Two trusted trials end rung 0 last; trial 0 then gains faster into rung 1
// than the trials promoted there and keeps its trust, trial 1 gains least and loses it. Without the
// key both lose it at rung 0 already.
BOOST_AUTO_TEST_CASE(a_gain_waiver_keeps_the_trust_of_a_trial_that_closes_the_gap) {
  const auto by_rank = trusting_with_rung_0_filled(TrustWaiver::None);
  BOOST_TEST(by_rank->report(0, 1, 1.0).decision == SchedulerDecision::Pause);  // 8 of 8 above
  const auto s = trusting_with_rung_0_filled(TrustWaiver::Gain);
  // At rung 0 the verdict waits for a gain: both run on.
  BOOST_TEST(s->report(0, 1, 1.0).decision == SchedulerDecision::Continue);
  BOOST_TEST(s->report(1, 1, 1.5).decision == SchedulerDecision::Continue);
  promote_top_third_to_rung_1(*s);  // gains of 0.4, 0.6 and 0.5
  // Trial 0 ranks last in rung 0 and in rung 1 ({9.5, 8.6, 7.4, 4}) but gains 3, more than
  // each of the 3 others: it keeps its trust, and again at rung 2 (rung 1's gains
  // {3, 0.6, 0.5, 0.4, 0.2} once trial 1 is in; rung 2 has no others yet, so that waits).
  BOOST_TEST(s->report(0, 3, 4.0).decision == SchedulerDecision::Continue);
  // Trial 1 gains 0.2, less than all 4 others: its low rank stands and it pauses.
  BOOST_TEST(s->report(1, 3, 1.7).decision == SchedulerDecision::Pause);
  BOOST_TEST(s->report(0, 9, 4.5).decision == SchedulerDecision::Continue);
  // A diverged report gains least: it never keeps a trust.
  const auto diverged = trusting_with_rung_0_filled(TrustWaiver::Gain);
  BOOST_TEST(diverged->report(0, 1, 1.0).decision == SchedulerDecision::Continue);
  promote_top_third_to_rung_1(*diverged);
  BOOST_TEST(diverged->report(0, 3, std::nan("")).decision == SchedulerDecision::Pause);
}

// trust_check_waiver = "overtake" (issue #64): a low rank ends a trust unless the trial
// overtook at least a quarter (and at least one) of the trials that entered the next rung
// from the same rung below. Trial 1 gains more than anyone (1.5 to 7) but passes no one, so
// the gain would keep its trust and overtaking does not; trial 0 passes trial 7.
BOOST_AUTO_TEST_CASE(an_overtake_waiver_keeps_only_a_trust_that_passed_its_peers) {
  const auto run = [](TrustWaiver waiver) {
    const auto s = trusting_with_rung_0_filled(waiver);
    // At rung 0 the waivers' verdict waits; without one both rank last there and pause.
    const auto start0 = s->report(0, 1, 1.0).decision;
    const auto start1 = s->report(1, 1, 1.5).decision;
    if (waiver == TrustWaiver::None) return std::pair{start0, start1};
    BOOST_TEST(start0 == SchedulerDecision::Continue);
    BOOST_TEST(start1 == SchedulerDecision::Continue);
    promote_top_third_to_rung_1(*s);  // 7.4, 8.6 and 9.5: no one passed
    // Trial 0 passes trial 7 (7.4): 1 of 3 peers, at least max(1, 3 / 4).
    const auto first = s->report(0, 3, 8.0).decision;
    // Trial 1 reaches 7.0: of its 4 peers (9, 8, 7, 0), 3 ranked above it in rung 0, all 4 here.
    const auto second = s->report(1, 3, 7.0).decision;
    return std::pair{first, second};
  };
  const auto overtake = run(TrustWaiver::Overtake);
  BOOST_TEST((overtake.first == SchedulerDecision::Continue));
  BOOST_TEST((overtake.second == SchedulerDecision::Pause));
  const auto gain = run(TrustWaiver::Gain);  // trial 1 gained 5.5, more than 3 of its 4 peers
  BOOST_TEST((gain.first == SchedulerDecision::Continue));
  BOOST_TEST((gain.second == SchedulerDecision::Continue));
  const auto none = run(TrustWaiver::None);  // rung 0's decisions
  BOOST_TEST((none.first == SchedulerDecision::Pause));
  BOOST_TEST((none.second == SchedulerDecision::Pause));
}

// trust_check_waiver_from_rung = 1 (issue #64): a low rank in the first rung ends the trust
// by itself, at once and when the rung is looked at again; the waiver is weighed from the
// second rung on.
BOOST_AUTO_TEST_CASE(a_waiver_from_rung_1_judges_the_first_rung_by_its_rank_alone) {
  // Trial 0 ranks last in the filled rung 0: from rung 0 the verdict waits, from 1 it stands.
  BOOST_TEST(trusting_with_rung_0_filled(TrustWaiver::Gain, 0)->report(0, 1, 1.0).decision ==
             SchedulerDecision::Continue);
  BOOST_TEST(trusting_with_rung_0_filled(TrustWaiver::Gain, 1)->report(0, 1, 1.0).decision ==
             SchedulerDecision::Pause);
  // Trial 0 reports before rung 0 fills, ranks last once it has, and gains 3 into rung 1,
  // more than its 3 peers: weighed from rung 0 the waiver keeps its trust; from rung 1 the
  // first rung's rank ends it when rung 0 is looked at again.
  const auto looked_at_again = [](std::int64_t from_rung) {
    const auto s = trusting(TrustWaiver::Gain, from_rung);
    BOOST_TEST(s->report(0, 1, 1.0).decision == SchedulerDecision::Continue);  // alone there
    fill_rung_0(*s);
    promote_top_third_to_rung_1(*s);  // gains of 0.4, 0.6 and 0.5
    return s->report(0, 3, 4.0).decision;
  };
  BOOST_TEST((looked_at_again(0) == SchedulerDecision::Continue));
  BOOST_TEST((looked_at_again(1) == SchedulerDecision::Pause));
  // Trial 1 ranks in rung 0's better half (5.5: 4 of 8 above) and last in rung 1 (7.0),
  // which it enters gaining 1.5, more than each of its 3 peers: the waiver keeps its trust
  // there. Without one its rank at rung 1 ends it.
  for (const auto waiver : {TrustWaiver::Gain, TrustWaiver::None}) {
    const auto s = trusting_with_rung_0_filled(waiver, waiver == TrustWaiver::Gain ? 1 : 0);
    BOOST_TEST(s->report(1, 1, 5.5).decision == SchedulerDecision::Continue);
    promote_top_third_to_rung_1(*s);
    BOOST_TEST(
        s->report(1, 3, 7.0).decision ==
        (waiver == TrustWaiver::Gain ? SchedulerDecision::Continue : SchedulerDecision::Pause));
  }
}

// trust_check_waiver = "lesson" (issue #64): a low rank is waived, at once, while the share
// of the rung's others above the trial is at most the earlier studies' share at the same
// resource plus a quarter; without a lesson there (another resource, a trial that is not
// the prior's) it ends the trust.
BOOST_AUTO_TEST_CASE(a_lesson_waiver_keeps_a_trust_the_earlier_study_saw_start_as_slowly) {
  // Trial 0 ranked below 80 % of the earlier trials at step 1, trial 1 below half of them.
  const auto with_lessons = [](std::int64_t from_rung, double trial_0_at_3) {
    auto s = trusting_with_rung_0_filled(TrustWaiver::Lesson, from_rung);
    s->use_trust_lessons({{{1, 0.8}, {3, trial_0_at_3}}, {{1, 0.5}}});
    return s;
  };
  // Trial 0 ranks last in rung 0 (8 of 8 others above), trial 1 next to last (8 of 9): 1.0
  // is within 0.8 + 0.25, 0.89 not within 0.5 + 0.25.
  const auto s = with_lessons(0, 0.0);
  BOOST_TEST(s->report(0, 1, 1.0).decision == SchedulerDecision::Continue);
  BOOST_TEST(s->report(1, 1, 1.5).decision == SchedulerDecision::Pause);
  // At rung 1 trial 0 ranks last again, where the earlier study saw it lead: the trust ends.
  promote_top_third_to_rung_1(*s);
  BOOST_TEST(s->report(0, 3, 4.0).decision == SchedulerDecision::Pause);
  // Had it ranked as low at step 3 there, it would run on.
  const auto late = with_lessons(0, 0.9);
  BOOST_TEST(late->report(0, 1, 1.0).decision == SchedulerDecision::Continue);
  promote_top_third_to_rung_1(*late);
  BOOST_TEST(late->report(0, 3, 4.0).decision == SchedulerDecision::Continue);
  // From rung 1 the first rung's rank ends the trust by itself.
  BOOST_TEST(with_lessons(1, 0.0)->report(0, 1, 1.0).decision == SchedulerDecision::Pause);
  // No lesson at step 1 (only at 3), or none at all: the low rank ends the trust.
  auto elsewhere = trusting_with_rung_0_filled(TrustWaiver::Lesson);
  elsewhere->use_trust_lessons({{{3, 0.9}}});
  BOOST_TEST(elsewhere->report(0, 1, 1.0).decision == SchedulerDecision::Pause);
  BOOST_TEST(trusting_with_rung_0_filled(TrustWaiver::Lesson)->report(0, 1, 1.0).decision ==
             SchedulerDecision::Pause);
}

BOOST_AUTO_TEST_CASE(validate_s_rung_summary_names_max_t_as_the_top_rung) {
  auto promotion = spec(SchedulerType::AshaPromotion, 1, 3, 20);
  BOOST_TEST((promotion_milestones(promotion) == std::vector<double>{1, 3, 9, 20}));
  BOOST_TEST(describe_rungs(promotion).at(0) == "pauses at 1, 3, 9, 20 (the last is max_t)");
  // A rung a rounding error short of max_t is max_t, not a rung of its own.
  auto tenths = spec(SchedulerType::AshaPromotion, 0.1, 3, 0.9);
  const auto rungs = promotion_milestones(tenths);
  BOOST_TEST(rungs.size() == 3U);
  BOOST_TEST(rungs.back() == 0.9);
  // asha keeps Ray's rule: rungs below max_t, where the trial then ends.
  BOOST_TEST(describe_rungs(spec(SchedulerType::Asha, 1, 3, 20)).at(0) ==
             "stops the worst at 1, 3, 9; a trial ends at max_t = 20");
  BOOST_TEST(describe_rungs(spec(SchedulerType::Hyperband, 1, 3, 9)).size() == 3U);
}

BOOST_AUTO_TEST_CASE(a_reopened_study_starts_new_trials_before_any_end_game) {
  // A study resumed with a larger max_trials: its closing is undone, so a free worker
  // starts a new trial instead of running a paused one to max_t.
  auto s = make();
  for (TrialId t = 0; t < 2; ++t) {
    s.add_trial(t, std::nullopt);
    s.report(t, 1, static_cast<double>(t));
  }
  s.close_admissions();
  BOOST_TEST((s.next_job(false)->kind == Job::Kind::Resume));  // the end game: trial 1
  s.open_admissions();
  BOOST_TEST((s.next_job(true)->kind == Job::Kind::Start));
  // A replay sees the reopening through the start that followed the close.
  auto replayed = make();
  for (TrialId t = 0; t < 2; ++t) {
    replayed.add_trial(t, std::nullopt);
    replayed.report(t, 1, static_cast<double>(t));
  }
  replayed.close_admissions();
  replayed.add_trial(2, std::nullopt);
  BOOST_TEST(!replayed.next_job(false));  // nothing promotable, and no end game now
}

BOOST_AUTO_TEST_CASE(a_trial_dropped_when_the_study_ended_waits_at_its_rung_again_once_reopened) {
  // Trials 0 and 1 pause at rung 0; trial 2 runs on to rung 1 and pauses there. Closed,
  // the end game runs trial 2 to max_t; the others are then dropped.
  auto s = make();
  for (TrialId t = 0; t < 3; ++t) {
    s.add_trial(t, std::nullopt);
    s.report(t, 1, static_cast<double>(t));
  }
  BOOST_TEST(s.next_job(false)->trial == 2U);  // rung 0's top third
  s.report(2, 3, 2.0);
  s.close_admissions();
  BOOST_TEST(s.next_job(false)->trial == 2U);  // the end game
  s.report(2, 9, 2.0);
  s.end_trial(2, TrialEnd::Completed, Observation{9, 2.0});
  BOOST_TEST((s.take_dropped() == std::vector<TrialId>{0, 1}));
  // Only trials that ended while paused reopen: a completed or unknown one does not.
  BOOST_TEST(!s.reopen(2));
  BOOST_TEST(!s.reopen(7));
  BOOST_TEST(s.reopen(1));
  BOOST_TEST(s.reopen(0));
  BOOST_TEST(!s.reopen(0));  // alive again: nothing to reopen
  // Admissions are open: nothing in rung 0 is promotable (its top third, trial 2, has
  // moved on), so a worker starts a new trial. Three worse ones make six in rung 0: two
  // slots, trial 2's and trial 1's.
  BOOST_TEST(s.take_dropped().empty());
  BOOST_TEST((s.next_job(true)->kind == Job::Kind::Start));
  for (TrialId t = 3; t < 6; ++t) {
    s.add_trial(t, std::nullopt);
    s.report(t, 1, -1.0);
  }
  const auto job = s.next_job(false);
  BOOST_REQUIRE(job);
  BOOST_TEST((job->kind == Job::Kind::Resume));
  BOOST_TEST(job->trial == 1U);  // ranked as before it was dropped: second of six
}
