#define BOOST_TEST_MODULE core_pbt_scheduler
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <sstream>

#include "core/schedulers/pbt/pbt_scheduler.hpp"

using namespace slurmtune::core;

namespace {

Domain ranged(DomainKind kind, double low, double high) {
  return Domain{kind, low, high, 0, {}};
}

// lr (loguniform, scaled or resampled) and batch (a list stepped through).
SchedulerSpec pbt_spec(double interval, bool synch = false) {
  SchedulerSpec s;
  s.type = SchedulerType::Pbt;
  s.max_t = 100;
  s.pbt.perturbation_interval = interval;
  s.pbt.synch = synch;
  PbtMutation lr;
  lr.param = 0;
  lr.name = "lr";
  lr.domain = ranged(DomainKind::LogUniform, 1e-4, 1e-1);
  PbtMutation batch;
  batch.param = 1;
  batch.name = "batch";
  batch.domain = Domain{DomainKind::RandInt, 16, 257, 0, {}};
  batch.values = {ParamValue{std::int64_t{32}}, ParamValue{std::int64_t{64}},
                  ParamValue{std::int64_t{128}}};
  s.pbt.mutations = {lr, batch};
  return s;
}

Configuration config(double lr, std::int64_t batch) {
  return Configuration{{ParamValue{lr}, ParamValue{batch}}};
}

// Starts `n` trials (lr = 0.001 (i + 1), batch 64) and closes admissions.
void start(PbtScheduler& s, std::size_t n) {
  for (TrialId t = 0; t < n; ++t) {
    BOOST_TEST((s.next_job(true)->kind == Job::Kind::Start));
    s.add_trial(t, std::nullopt);
    s.trial_configured(t, config(0.001 * static_cast<double>(t + 1), 64));
  }
  s.close_admissions();
}

// One report; a checkpoint it asks for is saved at once (as the simulator does).
ReportOutcome report(PbtScheduler& s, TrialId trial, double step, double value) {
  ReportOutcome o = s.report(trial, step, value);
  if (o.checkpoint) s.checkpoint_saved(trial, step);
  return o;
}

}  // namespace

BOOST_AUTO_TEST_CASE(nothing_happens_between_perturbation_points_or_during_burn_in) {
  auto spec = pbt_spec(4);
  spec.pbt.burn_in_period = 6;
  PbtScheduler s(spec, Mode::Min, 1);
  start(s, 4);
  for (TrialId t = 0; t < 4; ++t)
    for (double step = 1; step < 6; ++step) {
      const auto o = report(s, t, step, 1.0 + static_cast<double>(t));
      BOOST_TEST((o.decision == SchedulerDecision::Continue));
      BOOST_TEST(!o.checkpoint);
    }
}

BOOST_AUTO_TEST_CASE(the_lower_quantile_exploits_the_upper_one) {
  // Four trials, quantile 1/4: one trial in each quantile. Losses 0.1 < 0.2 < 0.3 < 0.4.
  PbtScheduler s(pbt_spec(2), Mode::Min, 3);
  start(s, 4);
  // The best reports first: ranked alone it is in no quantile (n <= 1), so it keeps no
  // checkpoint; the others rank it above them at their turn.
  BOOST_TEST((report(s, 0, 2, 0.1).decision == SchedulerDecision::Continue));
  const auto second = report(s, 1, 2, 0.2);  // n = 2, k = 1: trial 1 is the lower one
  // Trial 0, the donor, was never checkpointed (it was alone when it reported): skipped.
  BOOST_TEST((second.decision == SchedulerDecision::Continue));
  BOOST_TEST(!second.exploit);
  // Trial 0 reports again at its next perturbation point, now in the upper quantile.
  const auto top = report(s, 0, 4, 0.05);
  BOOST_TEST(top.checkpoint);
  BOOST_TEST((top.decision == SchedulerDecision::Continue));
  const auto low = report(s, 2, 2, 0.3);  // ranks 0.05, 0.2, 0.3: k = 1, trial 2 lowest
  BOOST_TEST((low.decision == SchedulerDecision::Exploit));
  BOOST_REQUIRE(low.exploit);
  BOOST_TEST(low.exploit->donor == 0u);
  BOOST_TEST(low.exploit->donor_step == 4);
  // Explored from the donor's configuration: lr scaled or resampled, batch moved.
  BOOST_TEST(!low.exploit->operations.empty());
  const double lr = as_number(low.exploit->config.values[0]);
  BOOST_TEST((lr >= 1e-4 && lr <= 1e-1));
  // The exploited trial waits for its resumption, which carries the exploit.
  const auto job = s.next_job(false);
  BOOST_REQUIRE(job);
  BOOST_TEST((job->kind == Job::Kind::Resume));
  BOOST_TEST(job->trial == 2u);
  BOOST_REQUIRE(job->exploit);
  BOOST_TEST((job->exploit->config == low.exploit->config));
  // It continues from the donor's step: its next perturbation point is 4 + 2.
  const auto between = report(s, 2, 5, 0.01);
  BOOST_TEST((between.decision == SchedulerDecision::Continue));
  BOOST_TEST(!between.checkpoint);
  const auto next = report(s, 2, 6, 0.01);  // now the best of three: the upper quantile
  BOOST_TEST((next.decision == SchedulerDecision::Continue));
  BOOST_TEST(next.checkpoint);
}

BOOST_AUTO_TEST_CASE(a_report_without_a_step_is_no_perturbation_point) {
  PbtScheduler s(pbt_spec(1), Mode::Min, 5);
  start(s, 2);
  const auto o = report(s, 0, std::nan(""), 0.5);
  BOOST_TEST((o.decision == SchedulerDecision::Continue));
  BOOST_TEST(!o.checkpoint);
}

BOOST_AUTO_TEST_CASE(a_nan_score_ranks_worst) {
  PbtScheduler s(pbt_spec(1), Mode::Max, 5);
  start(s, 3);
  report(s, 0, 1, 0.9);  // alone: nothing
  report(s, 1, 1, 0.5);  // 0.9 vs 0.5: trial 1 lower, donor 0 has no checkpoint yet
  BOOST_TEST(report(s, 0, 2, 0.95).checkpoint);  // trial 0 upper: checkpointed
  const auto o = report(s, 2, 1, std::nan(""));
  BOOST_TEST((o.decision == SchedulerDecision::Exploit));
  BOOST_TEST(o.exploit->donor == 0u);
}

BOOST_AUTO_TEST_CASE(exploring_follows_ray_s_rules) {
  auto spec = pbt_spec(1);
  spec.pbt.resample_probability = 0;  // always perturb: scale by 1.2 or 0.8, shift ±1
  PbtScheduler s(spec, Mode::Min, 7);
  for (int i = 0; i < 200; ++i) {
    std::string ops;
    const auto c = s.explore(config(0.01, 64), ops);
    const double lr = as_number(c.values[0]);
    BOOST_TEST((std::fabs(lr - 0.012) < 1e-12 || std::fabs(lr - 0.008) < 1e-12));
    const auto batch = std::get<std::int64_t>(c.values[1]);
    BOOST_TEST((batch == 32 || batch == 128));
    BOOST_TEST(ops.find("lr * ") == 0u);
  }
  // Scaled past the domain: clamped to it. At the list's end: a no-op shift.
  for (int i = 0; i < 50; ++i) {
    std::string ops;
    const auto c = s.explore(config(0.1, 128), ops);
    BOOST_TEST(as_number(c.values[0]) <= 0.1);
    const auto batch = std::get<std::int64_t>(c.values[1]);
    BOOST_TEST(
        (batch == 64 || (batch == 128 && ops.find("shift right (noop)") != std::string::npos)));
  }
  // A value not in the list is always resampled from it.
  std::string ops;
  const auto c = s.explore(config(0.01, 100), ops);
  BOOST_TEST(ops.find("batch resample") != std::string::npos);
  const auto batch = std::get<std::int64_t>(c.values[1]);
  BOOST_TEST((batch == 32 || batch == 64 || batch == 128));
}

BOOST_AUTO_TEST_CASE(integer_parameters_are_truncated_as_ray_does) {
  SchedulerSpec spec = pbt_spec(1);
  spec.pbt.resample_probability = 0;
  spec.pbt.perturbation_factors = {1.2};
  spec.pbt.mutations = {spec.pbt.mutations[0]};
  PbtMutation width;
  width.param = 1;
  width.name = "width";
  width.domain = Domain{DomainKind::RandInt, 1, 100, 0, {}};
  spec.pbt.mutations.push_back(width);
  PbtScheduler s(spec, Mode::Min, 2);
  std::string ops;
  // int(3 * 1.2) = 3, int(99 * 1.2) = 118 -> clamped to 99 (randint's upper bound is open).
  BOOST_TEST(std::get<std::int64_t>(s.explore(config(0.01, 3), ops).values[1]) == 3);
  BOOST_TEST(std::get<std::int64_t>(s.explore(config(0.01, 99), ops).values[1]) == 99);
}

BOOST_AUTO_TEST_CASE(a_population_larger_than_the_workers_takes_turns) {
  // Two workers, four trials: at a perturbation point a trial pauses while others wait,
  // and the least-trained waiting trial runs next (new trials first).
  PbtScheduler s(pbt_spec(2), Mode::Min, 1);
  for (TrialId t = 0; t < 2; ++t) {
    s.add_trial(t, std::nullopt);
    s.trial_configured(t, config(0.01, 64));
  }
  BOOST_TEST((report(s, 0, 2, 0.5).decision == SchedulerDecision::Pause));  // two more to start
  s.add_trial(2, std::nullopt);
  s.trial_configured(2, config(0.02, 64));
  s.add_trial(3, std::nullopt);
  s.trial_configured(3, config(0.03, 64));
  s.close_admissions();
  BOOST_TEST((report(s, 1, 2, 0.4).decision == SchedulerDecision::Pause));  // trial 0 waits
  const auto next = s.next_job(false);
  BOOST_REQUIRE(next);
  BOOST_TEST(next->trial == 0u);  // trained 2, as trial 1: the earlier trial first
}

BOOST_AUTO_TEST_CASE(synch_mode_waits_for_the_whole_population) {
  PbtScheduler s(pbt_spec(2, true), Mode::Min, 4);
  start(s, 4);
  for (TrialId t = 0; t < 3; ++t) {
    const auto o = report(s, t, 2, 0.1 * static_cast<double>(t + 1));
    BOOST_TEST((o.decision == SchedulerDecision::Pause));
    BOOST_TEST(!s.next_job(false));  // nobody resumes before the last one arrives
  }
  // The last arrival, once its checkpoint is saved, perturbs everyone: it is the worst,
  // so it exploits trial 0 (the best, checkpointed first as the upper quantile).
  const auto last = s.report(3, 2, 0.9);
  BOOST_TEST((last.decision == SchedulerDecision::Pause));
  BOOST_TEST(!s.next_job(false));
  s.checkpoint_saved(3, 2);
  const auto taken = s.take_exploits();
  BOOST_REQUIRE(taken.size() == 1u);
  BOOST_TEST(taken[0].first == 3u);
  BOOST_TEST(taken[0].second.donor == 0u);
  BOOST_TEST(taken[0].second.donor_step == 2);
  std::size_t resumed = 0;
  while (const auto job = s.next_job(false)) {
    ++resumed;
    BOOST_TEST((job->exploit.has_value() == (job->trial == 3)));
  }
  BOOST_TEST(resumed == 4u);
}

BOOST_AUTO_TEST_CASE(synch_mode_goes_on_when_the_trial_everyone_waits_for_ends) {
  PbtScheduler s(pbt_spec(2, true), Mode::Min, 4);
  start(s, 3);
  report(s, 0, 2, 0.1);
  report(s, 1, 2, 0.2);
  BOOST_TEST(!s.next_job(false));
  s.end_trial(2, TrialEnd::Failed, std::nullopt);
  BOOST_TEST(s.next_job(false).has_value());  // nothing hangs
}

BOOST_AUTO_TEST_CASE(synch_mode_goes_on_when_a_checkpoint_never_comes) {
  PbtScheduler s(pbt_spec(2, true), Mode::Min, 4);
  start(s, 2);
  report(s, 0, 2, 0.1);
  BOOST_TEST(s.report(1, 2, 0.2).checkpoint);
  BOOST_TEST(!s.next_job(false));       // waits for trial 1's checkpoint
  s.checkpoint_saved(1, std::nan(""));  // it left without one
  BOOST_TEST(s.next_job(false).has_value());
}

BOOST_AUTO_TEST_CASE(decisions_are_a_function_of_the_seed_and_the_reports) {
  const auto run = [](std::uint64_t seed) {
    PbtScheduler s(pbt_spec(1), Mode::Min, seed);
    start(s, 8);
    std::vector<std::string> trace;
    for (double step = 1; step <= 12; ++step)
      for (TrialId t = 0; t < 8; ++t) {
        const auto o = report(s, t, step, std::fmod(0.37 * static_cast<double>(t) + step, 1.0));
        std::ostringstream line;
        line << to_string(o.decision);
        if (o.exploit) line << ' ' << o.exploit->donor << ' ' << o.exploit->operations;
        trace.push_back(line.str());
        while (const auto job = s.next_job(false)) {
        }
      }
    return trace;
  };
  const auto a = run(11), b = run(11), c = run(12);
  BOOST_TEST(a == b, boost::test_tools::per_element());
  BOOST_TEST((a != c));
  BOOST_TEST(std::count_if(a.begin(), a.end(),
                           [](const std::string& l) { return l.rfind("exploit", 0) == 0; }) > 0);
}

BOOST_AUTO_TEST_CASE(only_a_saved_checkpoint_is_cloned) {
  // slurmtune run: the donor's checkpoint exists once its CHECKPOINT arrives. Until then
  // the donor cannot be cloned (Ray: "no checkpoint for trial, skip exploit").
  PbtScheduler s(pbt_spec(2), Mode::Min, 3);
  start(s, 4);
  s.report(0, 2, 0.1);
  s.report(1, 2, 0.2);
  BOOST_TEST(s.report(0, 4, 0.05).checkpoint);  // asked, not saved yet
  const auto early = s.report(2, 2, 0.3);
  BOOST_TEST((early.decision == SchedulerDecision::Continue));
  BOOST_TEST(s.take_exploits().empty());
  s.checkpoint_saved(0, 3);  // an older step does not provide it
  BOOST_TEST((s.report(2, 4, 0.3).decision == SchedulerDecision::Continue));
  s.checkpoint_saved(0, 4);
  const auto late = s.report(3, 2, 0.4);
  BOOST_TEST((late.decision == SchedulerDecision::Exploit));
  BOOST_REQUIRE(late.exploit);
  BOOST_TEST(late.exploit->donor == 0u);
  BOOST_TEST(late.exploit->donor_step == 4);
  BOOST_TEST(late.exploit->step == 2);
  const auto taken = s.take_exploits();
  BOOST_REQUIRE(taken.size() == 1u);
  BOOST_TEST(taken[0].first == 3u);
  BOOST_TEST((taken[0].second.config == late.exploit->config));
  BOOST_TEST(s.take_exploits().empty());  // each once
}

// What a resume makes sure is kept: each live trial's checkpoint others may clone.
BOOST_AUTO_TEST_CASE(clonable_checkpoints_are_the_saved_ones_of_live_trials) {
  PbtScheduler s(pbt_spec(2), Mode::Min, 3);
  start(s, 4);
  BOOST_TEST(s.clonable_checkpoints().empty());
  s.report(0, 2, 0.1);
  s.report(1, 2, 0.2);
  BOOST_TEST(s.report(0, 4, 0.05).checkpoint);
  BOOST_TEST(s.clonable_checkpoints().empty());  // asked for, not saved
  s.checkpoint_saved(0, 4);
  using Clonable = std::vector<std::pair<TrialId, double>>;
  BOOST_TEST((s.clonable_checkpoints() == Clonable{{0, 4.0}}));
  s.end_trial(0, TrialEnd::Completed, std::nullopt);
  BOOST_TEST(s.clonable_checkpoints().empty());
}

BOOST_AUTO_TEST_CASE(synchronous_exploits_of_waiting_trials_are_taken_too) {
  PbtScheduler s(pbt_spec(2, true), Mode::Min, 4);
  start(s, 4);
  // The worst arrives first and waits; the best arrives last and perturbs everyone.
  for (TrialId t = 0; t < 4; ++t)
    report(s, t, 2, 0.9 - 0.2 * static_cast<double>(t));
  const auto taken = s.take_exploits();
  BOOST_REQUIRE(taken.size() == 1u);
  BOOST_TEST(taken[0].first == 0u);  // a waiting trial, not the reporter
  BOOST_TEST(taken[0].second.donor != 0u);
}
