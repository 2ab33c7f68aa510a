#define BOOST_TEST_MODULE core_freeze_thaw_scheduler
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <map>

#include "core/random.hpp"
#include "core/schedulers/continuation_model.hpp"
#include "core/schedulers/early_stopping/asha_promotion_scheduler.hpp"
#include "core/schedulers/freeze_thaw/freeze_thaw_scheduler.hpp"
#include "unit/core/schedulers/scheduler_fixture.hpp"

using namespace slurmtune::core;
using namespace slurmtune::core::testing;

namespace {

// A model whose expectations the test sets: per paused trial, and for a start. Not ready
// (nullopt) until told. Its answers depend on what it is asked only, as a real model's
// depend on the events it has seen.
class ScriptedModel final : public ContinuationModel {
 public:
  bool ready = true;
  double start = 0;
  std::map<TrialId, double> resume;
  std::optional<double> start_seconds;  // seconds per unit of resource, when known
  std::map<TrialId, double> seconds;
  std::optional<ContinuationScores> score_jobs(
      TrialId, double first, const std::vector<ContinuationQuery>& paused) override {
    if (!ready) return std::nullopt;
    ContinuationScores out;
    out.start = {start, PredictedFinal{first, 0, 0, 0}, start_seconds};
    for (const auto& q : paused) {
      const auto it = resume.find(q.trial);
      const double improvement = it == resume.end() ? 0 : it->second;
      const auto cost = seconds.find(q.trial);
      out.resumes.push_back({improvement,
                             PredictedFinal{q.resource, 10.0 + static_cast<double>(q.trial), 9.0,
                                            11.0 + static_cast<double>(q.trial)},
                             cost == seconds.end() ? std::nullopt : std::optional(cost->second)});
    }
    return out;
  }
};

SchedulerSpec freeze_thaw(double mix = 0, JobCost cost = JobCost::Resource) {
  SchedulerSpec s = spec(SchedulerType::FreezeThaw, 1, 3, 9);  // rungs 1, 3, 9
  s.promotion_mix = mix;
  s.job_cost = cost;
  return s;
}

// Trials 0..n-1 started and paused at the first rung with values 1..n (max: n is best).
void paused_at_first_rung(Scheduler& s, TrialId n) {
  for (TrialId t = 0; t < n; ++t)
    BOOST_TEST(start_and_report(s, t, 1, static_cast<double>(t + 1)).decision ==
               SchedulerDecision::Pause);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_model_resumes_the_trial_it_expects_most_of_per_unit_of_resource) {
  FreezeThawScheduler s(freeze_thaw(), Mode::Max, 0);
  ScriptedModel model;
  s.use_model(&model);
  paused_at_first_rung(s, 3);
  // Per unit of resource: a start trains 1 step, a resumption from 1 to 3 trains 2.
  model.start = 0.3;
  model.resume = {{0, 1.0}, {1, 0.8}, {2, 0.1}};  // rates 0.5, 0.4, 0.05
  const auto job = s.next_job(true);
  BOOST_REQUIRE(job);
  BOOST_TEST((job->kind == Job::Kind::Resume));
  BOOST_TEST(job->trial == 0U);  // the worst at the rung: promotion would have taken trial 2
  BOOST_TEST(job->until == 3.0);
  BOOST_REQUIRE(job->reason);
  BOOST_TEST((job->reason->rule == ResumeReason::Rule::Model));
  BOOST_TEST(job->reason->until == 3.0);
  BOOST_TEST(job->reason->improvement == 0.5);
  BOOST_TEST(job->reason->start_improvement == 0.3);
  BOOST_REQUIRE(job->reason->expected);
  BOOST_TEST(job->reason->expected->mean == 10.0);
  BOOST_TEST(job->reason->expected->at == 3.0);
  // Trial 0 now runs: the next job is between trials 1 and 2 and a start.
  BOOST_TEST(s.next_job(true)->trial == 1U);
}

BOOST_AUTO_TEST_CASE(a_start_wins_when_the_model_expects_more_of_it) {
  FreezeThawScheduler s(freeze_thaw(), Mode::Max, 0);
  ScriptedModel model;
  s.use_model(&model);
  paused_at_first_rung(s, 2);
  model.start = 0.6;
  model.resume = {{0, 1.0}, {1, 1.1}};  // rates 0.5, 0.55
  BOOST_TEST((s.next_job(true)->kind == Job::Kind::Start));
  // Starts forbidden (admissions closed): the promotion rule alone; with two trials at
  // the rung its top third is empty, so nothing runs.
  BOOST_TEST(!s.next_job(false));
  // A third trial makes trial 2 (the best) promotable.
  BOOST_TEST(start_and_report(s, 2, 1, 3.0).decision == SchedulerDecision::Pause);
  const auto job = s.next_job(false);
  BOOST_REQUIRE(job);
  BOOST_TEST(job->trial == 2U);
  BOOST_TEST((job->reason->rule == ResumeReason::Rule::Promotion));
}

BOOST_AUTO_TEST_CASE(cost_none_compares_expected_improvement_alone) {
  ScriptedModel model;
  model.start = 0.4;
  model.resume = {{0, 0.5}};  // per resource 0.25: below the start's 0.4
  FreezeThawScheduler per_resource(freeze_thaw(0, JobCost::Resource), Mode::Max, 0);
  FreezeThawScheduler plain(freeze_thaw(0, JobCost::None), Mode::Max, 0);
  for (Scheduler* s : {static_cast<Scheduler*>(&per_resource), static_cast<Scheduler*>(&plain)}) {
    s->use_model(&model);
    paused_at_first_rung(*s, 1);
  }
  BOOST_TEST((per_resource.next_job(true)->kind == Job::Kind::Start));
  const auto job = plain.next_job(true);
  BOOST_TEST((job->kind == Job::Kind::Resume));
  BOOST_TEST(job->reason->improvement == 0.5);
}

// cost = "seconds": per second of the job, once the model knows every job's step cost;
// until then per unit of resource.
BOOST_AUTO_TEST_CASE(cost_seconds_prefers_what_is_cheap_to_train) {
  ScriptedModel model;
  model.start = 0.3;                    // a start: 1 step
  model.resume = {{0, 1.0}, {1, 0.9}};  // resumptions: 2 steps each
  FreezeThawScheduler s(freeze_thaw(0, JobCost::Seconds), Mode::Max, 0);
  s.use_model(&model);
  paused_at_first_rung(s, 2);
  model.start_seconds = 1.0;
  model.seconds = {{0, 4.0}, {1, 0.5}};  // per second: 0.125 and 0.9 against the start's 0.3
  const auto job = s.next_job(true);
  BOOST_REQUIRE(job);
  BOOST_TEST(job->trial == 1U);
  BOOST_TEST(job->reason->improvement == 0.9);
  BOOST_TEST(job->reason->start_improvement == 0.3);
  // One cost unknown: all compared per unit of resource again (trial 0: 0.5 > 0.3).
  model.seconds.erase(0);
  const auto other = s.next_job(true);
  BOOST_TEST(other->trial == 0U);
  BOOST_TEST(other->reason->improvement == 0.5);
}

// Without a model, with a model that has no data yet, or with promotion_mix = 1, every
// job is asha_promotion's: the same starts and promotions on the same reports.
BOOST_AUTO_TEST_CASE(without_the_model_it_decides_as_asha_promotion) {
  ScriptedModel not_ready;
  not_ready.ready = false;
  ScriptedModel eager;  // would resume anything, were it asked
  eager.start = -1;
  for (int variant = 0; variant < 3; ++variant) {
    FreezeThawScheduler s(freeze_thaw(variant == 2 ? 1.0 : 0.0), Mode::Max, 5);
    if (variant == 1) s.use_model(&not_ready);
    if (variant == 2) s.use_model(&eager);
    AshaPromotionScheduler reference(spec(SchedulerType::AshaPromotion, 1, 3, 9), Mode::Max);
    Xoshiro256 rng(11);
    TrialId next = 0;
    std::vector<std::pair<TrialId, double>> running;
    for (int round = 0; round < 200; ++round) {
      const bool may_start = next < 40;
      const auto a = s.next_job(may_start), b = reference.next_job(may_start);
      BOOST_REQUIRE(a.has_value() == b.has_value());
      if (!a) {
        if (running.empty()) break;
      } else {
        BOOST_REQUIRE((a->kind == b->kind));
        if (a->kind == Job::Kind::Start) {
          s.add_trial(next, std::nullopt);
          reference.add_trial(next, std::nullopt);
          running.emplace_back(next++, 0.0);
        } else {
          BOOST_REQUIRE(a->trial == b->trial);
          BOOST_TEST((a->reason->rule == ResumeReason::Rule::Promotion));
          running.emplace_back(a->trial, a->until == 3.0 ? 1.0 : 3.0);
        }
      }
      if (running.empty()) continue;
      // The oldest running trial reports its next rung.
      auto [trial, at] = running.front();
      running.erase(running.begin());
      const double step = at == 0 ? 1 : at == 1 ? 3 : 9;
      const double value = rng.uniform01() + step;
      const auto x = s.report(trial, step, value), y = reference.report(trial, step, value);
      BOOST_REQUIRE(x.decision == y.decision);
      if (x.decision == SchedulerDecision::Stop) {
        s.end_trial(trial, TrialEnd::Completed, Observation{step, value});
        reference.end_trial(trial, TrialEnd::Completed, Observation{step, value});
      }
    }
    BOOST_TEST(next == 40U, "variant " << variant);
  }
}

// `slurmtune replay` and a resumed study ask at each recorded resumption with starts
// forbidden; the run asked with starts allowed. Both must name the same trial for the
// same reason, whatever the model says and whichever rule the coin picks.
BOOST_AUTO_TEST_CASE(replay_asking_with_starts_forbidden_gets_the_same_resumption) {
  ScriptedModel model;
  FreezeThawScheduler run(freeze_thaw(0.25), Mode::Max, 3), replay(freeze_thaw(0.25), Mode::Max, 3);
  run.use_model(&model);
  replay.use_model(&model);
  Xoshiro256 rng(7);
  TrialId next = 0;
  std::vector<std::pair<TrialId, double>> running;  // (trial, next rung)
  std::size_t by_model = 0, by_rule = 0, starts = 0;
  for (int round = 0; round < 400; ++round) {
    model.start = rng.uniform01();
    for (TrialId t = 0; t < next; ++t)
      model.resume[t] = 2.5 * rng.uniform01();
    const auto job = run.next_job(next < 60);
    if (job && job->kind == Job::Kind::Resume) {
      const auto again = replay.next_job(false);
      BOOST_REQUIRE(again);
      BOOST_REQUIRE(again->trial == job->trial);
      BOOST_REQUIRE((again->reason->rule == job->reason->rule));
      BOOST_TEST(again->reason->improvement == job->reason->improvement);
      (job->reason->rule == ResumeReason::Rule::Model ? by_model : by_rule) += 1;
      running.emplace_back(job->trial, job->until);
    } else if (job) {
      run.add_trial(next, std::nullopt);
      replay.add_trial(next, std::nullopt);
      running.emplace_back(next++, 1.0);
      ++starts;
    }
    if (running.empty()) break;
    const auto pick =
        static_cast<std::size_t>(rng.uniform01() * static_cast<double>(running.size()));
    const auto [trial, step] = running[pick];
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
    const double value = rng.uniform01() * step;
    const auto a = run.report(trial, step, value), b = replay.report(trial, step, value);
    BOOST_REQUIRE(a.decision == b.decision);
    if (a.decision == SchedulerDecision::Stop) {
      run.end_trial(trial, TrialEnd::Completed, Observation{step, value});
      replay.end_trial(trial, TrialEnd::Completed, Observation{step, value});
    }
  }
  BOOST_TEST(starts == 60U);
  BOOST_TEST(by_model > 10U);
  BOOST_TEST(by_rule > 10U);
}

BOOST_AUTO_TEST_CASE(settled_trials_no_rule_resumes_are_dropped_after_the_end_game) {
  FreezeThawScheduler s(freeze_thaw(), Mode::Max, 0);
  ScriptedModel model;
  s.use_model(&model);
  paused_at_first_rung(s, 2);
  model.start = 1.0;
  model.resume = {{0, 0.1}, {1, 0.1}};
  BOOST_TEST(s.take_dropped().empty());  // admissions open: a start may still come
  s.close_admissions();
  // Nothing runs, the model prefers a start that cannot come, and two trials at the rung
  // promote none: the end game runs the best (trial 1) to max_t first.
  BOOST_TEST(s.take_dropped().empty());
  const auto job = s.next_job(false);
  BOOST_REQUIRE(job);
  BOOST_TEST(job->trial == 1U);
  BOOST_TEST(s.report(1, 3, 2.5).decision == SchedulerDecision::Continue);
  BOOST_TEST(s.report(1, 9, 3.0).decision == SchedulerDecision::Stop);
  s.end_trial(1, TrialEnd::Completed, Observation{9, 3.0});
  // Then trial 0's wait is over.
  BOOST_TEST((s.take_dropped() == std::vector<TrialId>{0}));
  BOOST_TEST(!s.next_job(false));
}

BOOST_AUTO_TEST_CASE(settled_trials_the_model_still_wants_are_resumed_not_dropped) {
  FreezeThawScheduler s(freeze_thaw(), Mode::Max, 0);
  ScriptedModel model;
  s.use_model(&model);
  paused_at_first_rung(s, 2);
  model.start = 0.1;
  model.resume = {{0, 1.0}};
  s.close_admissions();
  BOOST_TEST(s.take_dropped().empty());
  BOOST_TEST(s.next_job(false)->trial == 0U);
}
