#define BOOST_TEST_MODULE core_study_controller
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/space/param_value.hpp"
#include "core/study/failure_text.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/study_controller.hpp"
#include "core/study/suggester_factory.hpp"

using namespace slurmtune;
using namespace slurmtune::core;

namespace {

StudySpec study(std::uint64_t trials, std::int64_t max_failures = 0) {
  StudySpec s;
  s.name = "ctl";
  s.metric = "loss";
  s.metrics = {"loss"};
  s.seed = 5;
  s.max_trials = trials;
  s.space = SearchSpace({Parameter{"x", Domain{DomainKind::Uniform, 0, 1, 0, {}}}});
  s.scheduler.type = SchedulerType::Asha;
  s.scheduler.max_t = 9;
  s.scheduler.grace_period = 1;
  s.scheduler.reduction_factor = 3;
  s.trial.max_failures = max_failures;
  return s;
}

// Two trials under asha_promotion with rf 2: the better one is promoted at once.
StudySpec promotion_study() {
  StudySpec s = study(2);
  s.scheduler.type = SchedulerType::AshaPromotion;
  s.scheduler.reduction_factor = 2;
  return s;
}

// Records what the results file would: one line per event, in order.
struct Journal final : StudyObserver {
  std::vector<std::string> lines;
  void trial_started(TrialId t, const Configuration&, int, const SuggestionInfo&, double) override {
    add("start", t);
  }
  void trial_resumed(TrialId t, const ResumeReason*, double) override { add("resume", t); }
  void trial_retried(TrialId t, const std::string&) override { add("retry", t); }
  void trial_ended(TrialId t, TrialEnd how, const std::string&) override {
    add(std::string(to_string(how)), t);
  }
  void admissions_closed() override { lines.push_back("closed"); }
  void trial_exploited(TrialId t, const Exploit& e) override {
    add("exploit " + std::to_string(e.donor) + "@" + format_double(e.donor_step), t);
  }
  void checkpoint_saved(TrialId t, double step) override {
    add("checkpoint@" + format_double(step), t);
  }
  void add(const std::string& what, TrialId t) { lines.push_back(what + " " + std::to_string(t)); }
};

struct Fixture {
  explicit Fixture(StudySpec s, const StudyResumePoint* resumed = nullptr)
      : spec(std::move(s)),
        controller(spec, make_scheduler(spec.scheduler, spec.mode, spec.seed, spec.name),
                   make_suggester(spec.space, spec.sampler, false, spec.seed), journal, resumed) {}
  StudySpec spec;
  Journal journal;
  StudyController controller;
};

// Four trials under pbt, every 2 steps, x resampled.
StudySpec pbt_study() {
  StudySpec s = study(4);
  s.scheduler.type = SchedulerType::Pbt;
  s.scheduler.max_t = 9;
  s.scheduler.pbt.perturbation_interval = 2;
  s.scheduler.pbt.population = 4;
  PbtMutation x;
  x.name = "x";
  x.domain = s.space.parameters()[0].domain;
  s.scheduler.pbt.mutations = {x};
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(admits_max_trials_then_closes_admissions_once) {
  Fixture f(study(3));
  for (TrialId expected = 0; expected < 3; ++expected) {
    const auto launch = f.controller.next_launch(0);
    BOOST_REQUIRE(launch);
    BOOST_TEST(launch->trial == expected);
    BOOST_TEST((launch->kind == TrialLaunch::Kind::Start));
    BOOST_TEST((launch->config == f.controller.config_of(expected)));
  }
  BOOST_TEST(!f.controller.next_launch(0));
  BOOST_TEST(!f.controller.next_launch(0));
  BOOST_TEST(std::count(f.journal.lines.begin(), f.journal.lines.end(), "closed") == 1);
  BOOST_TEST(f.controller.counts().running == 3u);
}

BOOST_AUTO_TEST_CASE(reports_are_judged_and_exits_end_trials_by_what_they_were_told) {
  Fixture f(study(3));
  for (int i = 0; i < 3; ++i)
    f.controller.next_launch(0);
  BOOST_TEST((f.controller.report(0, 1, 0.1).instruction == Instruction::Continue));
  // Worse than the rung's cutoff: stopped; the exit then ends it as stopped.
  const auto stop = f.controller.report(1, 1, 5.0);
  BOOST_TEST((stop.instruction == Instruction::Stop));
  BOOST_TEST(stop.outcome.rung.has_value());
  BOOST_TEST((f.controller.instruction(1) == Instruction::Stop));
  BOOST_TEST((f.controller.trial_exited(1, true, "") == ExitMeaning::Ended));
  // Reaching max_t completes a trial whatever its exit status.
  for (double step = 2; step <= 9; ++step)
    f.controller.report(0, step, 0.1 / step);
  BOOST_TEST((f.controller.instruction(0) == Instruction::Complete));
  BOOST_TEST((f.controller.trial_exited(0, false, "killed") == ExitMeaning::Ended));
  // A program that ends by itself without being told is complete.
  BOOST_TEST((f.controller.trial_exited(2, true, "") == ExitMeaning::Ended));
  const auto& c = f.controller.counts();
  BOOST_TEST(c.completed == 2u);
  BOOST_TEST(c.stopped == 1u);
  BOOST_TEST(c.running == 0u);
  BOOST_TEST(f.controller.best()->trial == 0u);
}

BOOST_AUTO_TEST_CASE(a_step_reported_twice_is_neither_judged_nor_recorded) {
  Fixture f(study(2));
  f.controller.next_launch(0);
  f.controller.report(0, 1, 0.5);
  f.controller.report(0, 2, 0.4);
  const auto again = f.controller.report(0, 2, 99.0);
  BOOST_TEST(again.duplicate);
  BOOST_TEST((again.instruction == Instruction::Continue));
  BOOST_TEST(f.controller.report(0, 1.5, 0.3).duplicate);
  BOOST_TEST(f.controller.counts().reports == 2u);
}

BOOST_AUTO_TEST_CASE(failed_attempts_are_retried_first_then_the_trial_fails) {
  Fixture f(study(5, 1));
  f.controller.next_launch(0);
  f.controller.report(0, 1, 0.5);
  BOOST_TEST((f.controller.trial_exited(0, false, "exit status 1") == ExitMeaning::Retried));
  const auto retry = f.controller.next_launch(0);
  BOOST_REQUIRE(retry);
  BOOST_TEST((retry->kind == TrialLaunch::Kind::Retry));
  BOOST_TEST(retry->trial == 0u);
  BOOST_TEST(retry->attempt == 1u);
  // The retry re-runs step 1 from an earlier checkpoint: not judged twice.
  BOOST_TEST(f.controller.report(0, 1, 0.5).duplicate);
  BOOST_TEST((f.controller.trial_exited(0, false, "exit status 1") == ExitMeaning::Ended));
  BOOST_TEST(f.controller.counts().failed == 1u);
  BOOST_TEST(f.controller.counts().retries == 1u);
  const std::vector<std::string> expected = {"start 0", "retry 0", "failed 0"};
  BOOST_TEST(f.journal.lines == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_metric_threshold_halts_the_study) {
  StudySpec s = study(10);
  s.metric_threshold = 0.05;
  Fixture f(s);
  f.controller.next_launch(0);
  f.controller.next_launch(0);
  BOOST_TEST((f.controller.report(0, 1, 0.01).instruction == Instruction::Stop));
  BOOST_TEST(f.controller.halt_reason().find("threshold") != std::string::npos);
  BOOST_TEST((f.controller.instruction(1) == Instruction::Stop));
  BOOST_TEST(!f.controller.next_launch(0));
  f.controller.trial_exited(0, true, "");
  f.controller.trial_exited(1, false, "SIGTERM");
  BOOST_TEST(f.controller.counts().stopped == 2u);
  BOOST_TEST(f.controller.counts().failed == 0u);
  BOOST_TEST(!f.controller.more_work_left());
}

BOOST_AUTO_TEST_CASE(the_time_budget_halts_admissions_and_running_trials) {
  StudySpec s = study(10);
  s.time_budget_s = 60;
  Fixture f(s);
  f.controller.next_launch(10);
  BOOST_TEST(!f.controller.check_budget(59));
  BOOST_TEST(f.controller.check_budget(60));
  BOOST_TEST(!f.controller.check_budget(61));  // once
  BOOST_TEST(!f.controller.next_launch(61));
  BOOST_TEST((f.controller.instruction(0) == Instruction::Stop));
}

BOOST_AUTO_TEST_CASE(a_shutdown_suspends_running_trials_for_the_next_session) {
  Fixture f(study(10));
  f.controller.next_launch(0);
  f.controller.next_launch(0);
  f.controller.report(0, 1, 0.5);
  f.controller.begin_shutdown();
  BOOST_TEST(!f.controller.next_launch(0));
  BOOST_TEST((f.controller.report(0, 2, 0.4).instruction == Instruction::Suspend));
  BOOST_TEST(decision_word(Instruction::Suspend) == "pause");
  BOOST_TEST((f.controller.trial_exited(0, true, "") == ExitMeaning::Unfinished));
  BOOST_TEST((f.controller.trial_exited(1, false, "SIGTERM") == ExitMeaning::Unfinished));
  BOOST_TEST(f.controller.more_work_left());
  const std::vector<std::string> expected = {"start 0", "start 1"};
  BOOST_TEST(f.journal.lines == expected, boost::test_tools::per_element());
}

// `slurmtune join`: a trial whose allocation ends is evicted: told to suspend, and
// however it exits it runs again in this session from its checkpoint (not a failure,
// not a retry); other trials go on, and a scheduler decision still wins.
BOOST_AUTO_TEST_CASE(an_evicted_trial_suspends_and_restarts_in_this_session) {
  Fixture f(study(3));
  f.controller.next_launch(0);
  f.controller.next_launch(0);
  f.controller.report(0, 1, 0.5);
  f.controller.evict(0);
  f.controller.evict(1);
  BOOST_CHECK_THROW(f.controller.evict(7), UsageError);
  BOOST_TEST((f.controller.instruction(0) == Instruction::Suspend));
  BOOST_TEST((f.controller.report(0, 2, 0.4).instruction == Instruction::Suspend));
  BOOST_TEST(f.controller.report(0, 3, 0.3).duplicate);  // already told to leave
  // Killed with its allocation (no clean exit) or leaving cleanly: the same.
  BOOST_TEST((f.controller.trial_exited(0, false, "SIGKILL") == ExitMeaning::Unfinished));
  BOOST_TEST((f.controller.trial_exited(1, true, "") == ExitMeaning::Unfinished));
  const auto first = f.controller.next_launch(0);
  BOOST_REQUIRE(first);
  BOOST_TEST((first->kind == TrialLaunch::Kind::Restart));
  BOOST_TEST(first->trial == 0u);
  BOOST_TEST(first->attempt == 0u);                      // not a failed attempt
  BOOST_TEST(f.controller.report(0, 2, 0.4).duplicate);  // re-run after its checkpoint
  BOOST_TEST((f.controller.report(0, 3, 0.3).instruction == Instruction::Continue));
  const auto second = f.controller.next_launch(0);
  BOOST_REQUIRE(second);
  BOOST_TEST(second->trial == 1u);
  BOOST_TEST(f.controller.counts().retries == 0u);
  BOOST_TEST(f.controller.counts().running == 2u);
  const std::vector<std::string> expected = {"start 0", "start 1"};
  BOOST_TEST(f.journal.lines == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_eviction_during_a_shutdown_leaves_the_trial_to_the_next_session) {
  Fixture f(study(3));
  f.controller.next_launch(0);
  f.controller.evict(0);
  f.controller.begin_shutdown();
  BOOST_TEST((f.controller.trial_exited(0, true, "") == ExitMeaning::Unfinished));
  BOOST_TEST(!f.controller.next_launch(0));
  BOOST_TEST(f.controller.more_work_left());
}
BOOST_AUTO_TEST_CASE(a_resumed_study_restarts_unfinished_trials_before_new_ones) {
  StudyResumePoint point;
  point.started = 4;
  point.restart = {2};
  point.failures = {{2, 1}};
  point.last_step = {{2, 3.0}};
  point.counts.completed = 3;
  StudySpec s = study(6);
  // The replayed scheduler knows trials 0..3 (here: added by hand).
  auto scheduler = make_scheduler(s.scheduler, s.mode, s.seed, s.name);
  for (TrialId t = 0; t < 4; ++t)
    scheduler->add_trial(t, std::nullopt);
  Journal journal;
  point.configs.assign(4, Configuration{{0.5}});
  StudyController controller(s, std::move(scheduler),
                             make_suggester(s.space, s.sampler, false, s.seed), journal, &point);
  const auto restart = controller.next_launch(0);
  BOOST_REQUIRE(restart);
  BOOST_TEST((restart->kind == TrialLaunch::Kind::Restart));
  BOOST_TEST(restart->trial == 2u);
  BOOST_TEST(restart->attempt == 1u);
  BOOST_TEST(controller.report(2, 3, 0.1).duplicate);
  BOOST_TEST(!controller.report(2, 4, 0.1).duplicate);
  const auto next = controller.next_launch(0);
  BOOST_REQUIRE(next);
  BOOST_TEST(next->trial == 4u);
  BOOST_TEST(controller.counts().completed == 3u);
}

BOOST_AUTO_TEST_CASE(unknown_trials_are_a_usage_error) {
  Fixture f(study(2));
  BOOST_CHECK_THROW(f.controller.report(7, 1, 0.1), UsageError);
  BOOST_CHECK_THROW(f.controller.instruction(7), UsageError);
}

BOOST_AUTO_TEST_CASE(the_same_script_gives_the_same_study) {
  const auto play = [] {
    Fixture f(study(20));
    std::vector<std::string> decisions;
    for (int round = 0; round < 20; ++round) {
      while (f.controller.counts().running < 4) {
        if (!f.controller.next_launch(0)) break;
      }
      for (const TrialId t : f.controller.running()) {
        const double value = std::fmod(static_cast<double>(t) * 0.37, 1.0);
        const auto v = f.controller.report(t, round + 1.0, value);
        decisions.push_back(std::string(to_string(v.instruction)));
        if (v.instruction != Instruction::Continue) f.controller.trial_exited(t, true, "");
      }
    }
    return std::make_pair(decisions, f.journal.lines);
  };
  BOOST_TEST((play() == play()));
}

BOOST_AUTO_TEST_CASE(a_trial_promoted_before_its_process_exits_is_resumed_after_the_exit) {
  // asha_promotion pauses a trial at its report; the scheduler may promote it at once,
  // while the paused process still writes its checkpoint. It must not run twice.
  Fixture f(promotion_study());
  f.controller.next_launch(0);
  f.controller.next_launch(0);
  BOOST_TEST((f.controller.report(0, 1, 0.1).instruction == Instruction::Pause));
  BOOST_TEST((f.controller.report(1, 1, 0.9).instruction == Instruction::Pause));
  // Both processes are still alive: the scheduler promotes trial 0 now (recorded now, as
  // a resume replays at this point), but it runs only after its process has exited.
  BOOST_TEST(!f.controller.next_launch(0));
  BOOST_TEST(std::count(f.journal.lines.begin(), f.journal.lines.end(), "resume 0") == 1);
  BOOST_TEST((f.controller.trial_exited(1, true, "") == ExitMeaning::Paused));
  // Admissions are closed (max_trials 2) and the rule promotes nothing more: the end
  // game takes trial 1 to max_t on the slot trial 1's exit freed.
  const auto finisher = f.controller.next_launch(0);
  BOOST_REQUIRE(finisher);
  BOOST_TEST(finisher->trial == 1u);
  BOOST_TEST((f.controller.trial_exited(0, true, "") == ExitMeaning::Paused));
  const auto resumed = f.controller.next_launch(0);
  BOOST_REQUIRE(resumed);
  BOOST_TEST((resumed->kind == TrialLaunch::Kind::Resume));
  BOOST_TEST(resumed->trial == 0u);
  BOOST_TEST(f.controller.counts().paused == 0u);
  BOOST_TEST(f.controller.counts().running == 2u);
  BOOST_TEST(std::count(f.journal.lines.begin(), f.journal.lines.end(), "resume 0") == 1);
}

BOOST_AUTO_TEST_CASE(work_that_does_not_fit_the_allocation_is_held_for_the_next_session) {
  // The allocation's clock as a predicate: only work resuming at step >= 2 fits.
  const FitsBeforeEnd late_only = [](double step) { return step >= 2; };
  Fixture f(study(5, 1));
  BOOST_REQUIRE(f.controller.next_launch(0));  // no clock: trial 0 starts
  f.controller.report(0, 2, 0.5);
  BOOST_TEST(!f.controller.next_launch(0, late_only));  // a new trial (step 0) does not fit
  BOOST_TEST(f.controller.held_for_clock());
  BOOST_TEST(f.controller.counts().started == 1u);
  // A retry resumes after step 2: it fits, and goes first.
  BOOST_TEST((f.controller.trial_exited(0, false, "exit status 1") == ExitMeaning::Retried));
  const auto retry = f.controller.next_launch(0, late_only);
  BOOST_REQUIRE(retry);
  BOOST_TEST((retry->kind == TrialLaunch::Kind::Retry));
  BOOST_TEST(!f.controller.held_for_clock());
  // A shutdown now leaves work for the next session: the held trials are not lost.
  f.controller.begin_shutdown();
  BOOST_TEST(f.controller.more_work_left());
}

BOOST_AUTO_TEST_CASE(a_promotion_that_does_not_fit_is_left_to_the_next_session) {
  Fixture f(promotion_study());
  f.controller.next_launch(0);
  f.controller.next_launch(0);
  f.controller.report(0, 1, 0.1);
  f.controller.report(1, 1, 0.9);
  f.controller.trial_exited(1, true, "");
  f.controller.trial_exited(0, true, "");
  BOOST_TEST(f.controller.counts().paused == 2u);
  // The scheduler promotes trial 0, but its next rung does not fit: recorded as resumed,
  // it is not launched now, and counts as unfinished work for the next session.
  BOOST_TEST(!f.controller.next_launch(0, [](double) { return false; }));
  BOOST_TEST(f.controller.held_for_clock());
  BOOST_TEST(std::count(f.journal.lines.begin(), f.journal.lines.end(), "resume 0") == 1);
  // Admissions are closed: the end game takes trial 1 too, and it does not fit either.
  BOOST_TEST(std::count(f.journal.lines.begin(), f.journal.lines.end(), "resume 1") == 1);
  BOOST_TEST(f.controller.counts().paused == 0u);
  BOOST_TEST(f.controller.counts().running == 0u);
  f.controller.begin_shutdown();
  BOOST_TEST(f.controller.more_work_left());
}

BOOST_AUTO_TEST_CASE(a_pbt_exploit_changes_the_configuration_once_the_donor_checkpoint_exists) {
  Fixture f(pbt_study());
  for (int i = 0; i < 4; ++i)
    BOOST_REQUIRE(f.controller.next_launch(0));
  const Configuration before = f.controller.config_of(3);
  f.controller.report(0, 2, 0.1);
  f.controller.report(1, 2, 0.2);
  // Trial 0 is the best at its next point: its checkpoint is wanted, not yet saved.
  BOOST_TEST(f.controller.report(0, 4, 0.05).outcome.checkpoint);
  BOOST_TEST(f.controller.wants_checkpoint(0, 4));
  BOOST_TEST(!f.controller.wants_checkpoint(0, 3));
  // Lower quantile, but the donor has nothing saved yet: no exploit.
  BOOST_TEST((f.controller.report(2, 2, 0.3).outcome.decision == SchedulerDecision::Continue));
  f.controller.checkpoint_saved(0, 4);
  BOOST_TEST(!f.controller.wants_checkpoint(0, 4));
  const auto verdict = f.controller.report(3, 2, 0.9);  // the worst: exploits trial 0
  BOOST_TEST((verdict.outcome.decision == SchedulerDecision::Exploit));
  BOOST_TEST((verdict.instruction == Instruction::Pause));
  BOOST_TEST(!(f.controller.config_of(3) == before));
  BOOST_TEST((f.controller.config_of(3) == verdict.outcome.exploit->config));
  BOOST_TEST(f.controller.last_step(3) == 4);  // it goes on from the donor's step
  BOOST_TEST(f.journal.lines.back() == "exploit 0@4.0 3");
  BOOST_TEST(f.journal.lines[f.journal.lines.size() - 2] == "checkpoint@4.0 0");
}

BOOST_AUTO_TEST_CASE(a_deferred_resume_waits_held_and_is_recorded_once) {
  // [checkpoints] node_local: a resume whose checkpoint's node is full goes back in line,
  // held, while other work takes the slot; released, it comes first.
  Fixture f(promotion_study());
  f.controller.next_launch(0);
  f.controller.next_launch(0);
  f.controller.report(0, 1, 0.1);
  f.controller.report(1, 1, 0.9);
  f.controller.trial_exited(0, true, "");
  const auto resumed = f.controller.next_launch(0);
  BOOST_REQUIRE(resumed);
  BOOST_TEST((resumed->kind == TrialLaunch::Kind::Resume));
  const auto running = f.controller.counts().running;
  f.controller.defer_launch(*resumed);
  BOOST_TEST(!f.controller.is_running(0));
  BOOST_TEST(f.controller.counts().running == running - 1);
  BOOST_TEST(f.controller.launches_held());
  BOOST_TEST(f.controller.more_work_left());
  BOOST_TEST(!f.controller.next_launch(0));  // admissions closed, the resume held
  f.controller.release_launch(0);
  const auto again = f.controller.next_launch(0);
  BOOST_REQUIRE(again);
  BOOST_TEST(again->trial == 0u);
  BOOST_TEST((again->kind == TrialLaunch::Kind::Resume));
  BOOST_TEST(f.controller.counts().running == running);
  BOOST_TEST(std::count(f.journal.lines.begin(), f.journal.lines.end(), "resume 0") == 1);
  BOOST_CHECK_THROW(f.controller.defer_launch(TrialLaunch{TrialLaunch::Kind::Resume, 7, {}, 0}),
                    UsageError);
}

BOOST_AUTO_TEST_CASE(an_exploited_trial_s_launch_waits_for_its_clone_and_nothing_else_changes) {
  // `slurmtune run` clones the donor's checkpoint off its loop: the exploited trial's
  // next launch waits for release_launch, the decisions and the journal do not.
  const auto play = [](bool held, Fixture& f) {
    if (held) f.controller.hold_exploited_launches();
    for (int i = 0; i < 4; ++i)
      BOOST_REQUIRE(f.controller.next_launch(0));
    f.controller.report(0, 2, 0.1);
    f.controller.report(1, 2, 0.2);
    f.controller.report(0, 4, 0.05);
    f.controller.checkpoint_saved(0, 4);
    BOOST_TEST((f.controller.report(3, 2, 0.9).outcome.decision == SchedulerDecision::Exploit));
    BOOST_TEST(f.controller.launches_held() == held);
    BOOST_TEST((f.controller.trial_exited(3, true, "") == ExitMeaning::Paused));
  };
  Fixture plain(pbt_study());
  play(false, plain);
  const auto resumed = plain.controller.next_launch(0);
  BOOST_REQUIRE(resumed);
  BOOST_TEST(resumed->trial == 3u);

  Fixture f(pbt_study());
  play(true, f);
  BOOST_TEST(!f.controller.next_launch(0));  // recorded as resumed, waiting for its clone
  BOOST_TEST(f.controller.more_work_left());
  BOOST_TEST(f.controller.counts().paused == 0u);
  BOOST_TEST(f.controller.counts().running == 3u);
  f.controller.release_launch(3);
  BOOST_TEST(!f.controller.launches_held());
  const auto launch = f.controller.next_launch(0);
  BOOST_REQUIRE(launch);
  BOOST_TEST((launch->kind == TrialLaunch::Kind::Resume));
  BOOST_TEST(launch->trial == 3u);
  BOOST_TEST((launch->config == resumed->config));
  BOOST_TEST(f.controller.counts().running == 4u);
  BOOST_TEST(f.journal.lines == plain.journal.lines, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_wanted_checkpoint_that_never_came_is_recorded_as_missing_at_exit) {
  Fixture f(pbt_study());
  for (int i = 0; i < 4; ++i)
    BOOST_REQUIRE(f.controller.next_launch(0));
  f.controller.report(0, 2, 0.1);
  f.controller.report(1, 2, 0.2);
  BOOST_TEST(f.controller.report(0, 4, 0.05).outcome.checkpoint);
  f.controller.trial_exited(0, false, "crashed");
  BOOST_TEST(f.journal.lines[f.journal.lines.size() - 2] == "checkpoint@NaN 0");
  // A restarted trial re-running that step is asked again.
  f.controller.expect_checkpoint(1, 2);
  BOOST_TEST(f.controller.report(1, 2, 0.2).outcome.checkpoint);  // a duplicate, asked again
}

BOOST_AUTO_TEST_CASE(a_trial_that_failed_is_never_the_best) {
  Fixture f(study(3));
  for (int i = 0; i < 3; ++i)
    BOOST_REQUIRE(f.controller.next_launch(0));
  f.controller.report(0, 1, 0.5);
  f.controller.report(1, 1, 0.1);  // the lowest loss, then it crashes
  f.controller.report(2, 1, 0.3);
  BOOST_TEST(f.controller.best()->trial == 1u);
  BOOST_TEST((f.controller.trial_exited(1, false, "exit status 1") == ExitMeaning::Ended));
  BOOST_REQUIRE(f.controller.best());
  BOOST_TEST(f.controller.best()->trial == 2u);
  BOOST_TEST(f.controller.best()->value == 0.3);
  // A later, better report of a trial that did not fail takes over as before.
  f.controller.report(0, 3, 0.05);
  BOOST_TEST(f.controller.best()->trial == 0u);
  BOOST_TEST(f.controller.best()->step == 3.0);
}

BOOST_AUTO_TEST_CASE(the_best_after_a_resume_counts_every_session_s_trials) {
  StudyResumePoint resumed;
  resumed.started = 2;
  resumed.configs = {Configuration{{ParamValue{0.1}}}, Configuration{{ParamValue{0.2}}}};
  resumed.counts.completed = 2;
  resumed.counts.reports = 4;
  resumed.best_values = {{0, 9, 0.7}, {1, 9, 0.2}};
  Fixture f(study(4), &resumed);
  BOOST_REQUIRE(f.controller.best());
  BOOST_TEST(f.controller.best()->trial == 1u);
  BOOST_REQUIRE(f.controller.next_launch(0));
  f.controller.report(2, 1, 0.4);
  BOOST_TEST(f.controller.best()->trial == 1u);  // the earlier session's trial still leads
}

BOOST_AUTO_TEST_CASE(attempts_failing_alike_before_any_report_halt_the_study) {
  Fixture f(study(10, 2));
  const std::string missing =
      "exit status 2\npython3: can't open file '/x/train.py': [Errno 2] No such file or directory";
  for (int i = 0; i < 2; ++i)
    BOOST_REQUIRE(f.controller.next_launch(0));
  BOOST_TEST((f.controller.trial_exited(0, false, missing) == ExitMeaning::Retried));
  BOOST_TEST((f.controller.trial_exited(1, false, missing) == ExitMeaning::Retried));
  BOOST_TEST(!f.controller.failed_fast());
  BOOST_REQUIRE(f.controller.next_launch(0));  // trial 0's retry
  // The third alike: the study halts with the cause instead of trying every trial.
  BOOST_TEST((f.controller.trial_exited(0, false, missing) == ExitMeaning::Ended));
  BOOST_TEST(f.controller.failed_fast());
  BOOST_TEST(f.controller.halt_reason().find("can't open file '/x/train.py'") != std::string::npos);
  BOOST_TEST(f.controller.halt_reason().find("the first 3 attempts failed alike") !=
             std::string::npos);
  BOOST_TEST(f.controller.counts().failed == 1u);
  BOOST_TEST(!f.controller.next_launch(0));  // nothing more starts
}

BOOST_AUTO_TEST_CASE(failures_after_a_report_or_unalike_do_not_halt) {
  Fixture unalike(study(10));
  for (int i = 0; i < 3; ++i)
    BOOST_REQUIRE(unalike.controller.next_launch(0));
  unalike.controller.trial_exited(0, false, "exit status 1\nValueError: a");
  unalike.controller.trial_exited(1, false, "exit status 1\nValueError: b");
  unalike.controller.trial_exited(2, false, "exit status 1\nValueError: a");
  BOOST_TEST(!unalike.controller.failed_fast());

  Fixture reported(study(10));
  for (int i = 0; i < 4; ++i)
    BOOST_REQUIRE(reported.controller.next_launch(0));
  reported.controller.report(3, 1, 0.5);  // the command works: failures are the trials' own
  for (TrialId t = 0; t < 3; ++t)
    reported.controller.trial_exited(t, false, "exit status 1\nCUDA out of memory");
  BOOST_TEST(!reported.controller.failed_fast());

  Fixture off(study(10));
  off.controller.set_fail_fast(0);
  for (int i = 0; i < 3; ++i)
    BOOST_REQUIRE(off.controller.next_launch(0));
  for (TrialId t = 0; t < 3; ++t)
    off.controller.trial_exited(t, false, "exit status 1\nsame");
  BOOST_TEST(!off.controller.failed_fast());
}

BOOST_AUTO_TEST_CASE(a_failure_in_one_line_carries_the_last_stderr_line) {
  BOOST_TEST(failure_summary("exit status 1") == "exit status 1");
  BOOST_TEST(failure_summary("exit status 1\nTraceback (most recent call last):\n  File x\n"
                             "ModuleNotFoundError: No module named 'torch'\n\n") ==
             "exit status 1: ModuleNotFoundError: No module named 'torch'");
  BOOST_TEST(last_error_line("exit status 1\n\n  \n") == "");
  BOOST_TEST(last_error_line("killed by signal 9\n...tail\r\n") == "...tail");
}

BOOST_AUTO_TEST_CASE(srun_s_own_lines_do_not_hide_the_trial_s_last_word) {
  BOOST_TEST(last_error_line("exit status 3\nModuleNotFoundError: No module named 'torch'\n"
                             "srun: error: n1: task 0: Exited with exit code 3\n"
                             "srun: launch/slurm: _step_signal: Terminating StepId=1.9\n") ==
             "ModuleNotFoundError: No module named 'torch'");
  BOOST_TEST(last_error_line("exit status 3\nsrun: error: n1: task 0: Exited with exit code 3") ==
             "srun: error: n1: task 0: Exited with exit code 3");
}
