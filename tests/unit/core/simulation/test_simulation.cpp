#define BOOST_TEST_MODULE core_simulation
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "core/search/optuna/hypervolume.hpp"
#include "core/simulation/repeated.hpp"
#include "core/simulation/simulation.hpp"

using namespace slurmtune::core;

namespace {
StudySpec study(SchedulerType type, std::uint64_t trials = 300) {
  StudySpec s;
  s.name = "sim";
  s.metric = "loss";
  s.seed = 11;
  s.max_trials = trials;
  s.space = SearchSpace({
      Parameter{"lr", Domain{DomainKind::LogUniform, 1e-4, 1e-1, 0, {}}},
      Parameter{"opt",
                Domain{DomainKind::Choice, 0, 0, 0, {ParamValue{"sgd"}, ParamValue{"adam"}}}},
      Parameter{"width", Domain{DomainKind::RandInt, 16, 256, 0, {}}},
  });
  s.scheduler.type = type;
  s.scheduler.max_t = 27;
  s.scheduler.grace_period = 1;
  s.scheduler.reduction_factor = 3;
  return s;
}

// Counts every lifecycle event and checks that each trial ends exactly once.
struct Ledger final : SimulationObserver {
  std::map<TrialId, int> ends;
  std::uint64_t started = 0, reports = 0, resumed = 0, paused = 0;
  void trial_started(TrialId, const Configuration&, int, const SuggestionInfo&, double) override {
    ++started;
  }
  void trial_resumed(TrialId, double, const ResumeReason*) override { ++resumed; }
  void reported(TrialId, double, const std::vector<double>&, const ReportOutcome& o,
                double) override {
    ++reports;
    paused += o.decision == SchedulerDecision::Pause;
  }
  void trial_ended(TrialId t, TrialEnd, double) override { ++ends[t]; }
};

SimulationSummary run(const StudySpec& s, std::size_t workers, Ledger* ledger = nullptr) {
  SimulationOptions options;
  options.workers = workers;
  return simulate_study(s, options, ledger);
}
}  // namespace

BOOST_AUTO_TEST_CASE(every_scheduler_accounts_for_every_trial) {
  for (const auto type : {SchedulerType::Fifo, SchedulerType::Asha, SchedulerType::AshaPromotion,
                          SchedulerType::Hyperband, SchedulerType::Median}) {
    BOOST_TEST_CONTEXT(scheduler_keyword(type)) {
      Ledger ledger;
      const auto s = run(study(type), 8, &ledger);
      BOOST_TEST(s.final.started == 300U);
      BOOST_TEST(s.final.running == 0U);
      BOOST_TEST(s.final.paused == 0U);
      BOOST_TEST(s.final.completed + s.final.stopped == 300U);
      BOOST_TEST(ledger.ends.size() == 300U);
      for (const auto& [trial, count] : ledger.ends)
        BOOST_REQUIRE_EQUAL(count, 1);
      BOOST_TEST(ledger.reports == s.final.reports);
      BOOST_TEST(s.best_trial.has_value());
      BOOST_TEST((s.utilisation > 0.0 && s.utilisation <= 1.0 + 1e-9));
    }
  }
}

BOOST_AUTO_TEST_CASE(fifo_runs_every_trial_to_max_t) {
  const auto s = run(study(SchedulerType::Fifo, 20), 4);
  BOOST_TEST(s.final.completed == 20U);
  BOOST_TEST(s.final.reports == 20U * 27U);
}

BOOST_AUTO_TEST_CASE(asha_stops_most_trials_early) {
  const auto s = run(study(SchedulerType::Asha, 1000), 16);
  BOOST_TEST(s.final.stopped > 500U);
  BOOST_TEST(s.final.reports < 1000U * 27U / 4);
}

BOOST_AUTO_TEST_CASE(the_same_seed_gives_the_same_run) {
  for (const auto type : {SchedulerType::Asha, SchedulerType::Hyperband}) {
    const auto a = run(study(type), 8), b = run(study(type), 8);
    BOOST_TEST(a.final.reports == b.final.reports);
    BOOST_TEST(*a.best_trial == *b.best_trial);
    BOOST_TEST(*a.final.best_value == *b.final.best_value);
    BOOST_TEST(a.makespan_s == b.makespan_s);
  }
}

// A decision clock that advances a quarter of a second on every reading: each decision
// (a suggestion, a judged report) then costs exactly 0.25 s, waited for by its worker.
BOOST_AUTO_TEST_CASE(measured_decisions_delay_the_worker_that_waits_for_them) {
  const StudySpec s = study(SchedulerType::Fifo, 20);
  SimulationOptions options;
  options.workers = 1;
  const auto free = simulate_study(s, options, nullptr);
  BOOST_TEST(free.decisions_charged == 0U);
  BOOST_TEST(free.decision_s == 0.0);
  double reading = 0;
  options.decision_clock = [&reading] { return reading += 0.25; };
  const auto charged = simulate_study(s, options, nullptr);
  BOOST_TEST(charged.decisions_charged == 20U + 20U * 27U);  // suggestions and reports
  BOOST_TEST(charged.decision_s == 0.25 * 560, boost::test_tools::tolerance(1e-9));
  // One worker waits for every decision but the last report's (nothing follows it).
  BOOST_TEST(charged.makespan_s == free.makespan_s + 0.25 * 559,
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(charged.final.reports == free.final.reports);
}

BOOST_AUTO_TEST_CASE(one_worker_is_always_busy) {
  const auto s = run(study(SchedulerType::Asha, 50), 1);
  BOOST_TEST(s.utilisation == 1.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(the_time_budget_stops_running_trials) {
  auto spec = study(SchedulerType::Fifo, 1000);
  spec.time_budget_s = 50;
  const auto s = run(spec, 4);
  BOOST_TEST(s.makespan_s <= 50.0);
  BOOST_TEST(s.final.started < 1000U);
  BOOST_TEST(s.final.stopped > 0U);
  BOOST_TEST(s.final.completed + s.final.stopped == s.final.started);
}

BOOST_AUTO_TEST_CASE(the_metric_threshold_ends_the_study) {
  auto spec = study(SchedulerType::Asha, 100000);
  spec.metric_threshold = 0.3;
  const auto s = run(spec, 4);
  BOOST_TEST(*s.final.best_value <= 0.3);
  BOOST_TEST(s.final.started < 100000U);
}

BOOST_AUTO_TEST_CASE(the_target_time_is_when_the_target_is_first_reached) {
  auto spec = study(SchedulerType::Asha, 200);
  spec.simulate.target = 0.5;
  const auto s = run(spec, 4);
  BOOST_TEST(s.time_to_target_s.has_value());
  BOOST_TEST(*s.time_to_target_s <= s.makespan_s);
}

BOOST_AUTO_TEST_CASE(the_grid_sampler_runs_each_point_once) {
  auto spec = study(SchedulerType::Fifo, 1000);
  spec.sampler.kind = SamplerKind::Grid;
  spec.space = SearchSpace({
      Parameter{
          "a", Domain{DomainKind::Grid, 0, 0, 0, {ParamValue{1L}, ParamValue{2L}, ParamValue{3L}}}},
      Parameter{"b", Domain{DomainKind::Choice, 0, 0, 0, {ParamValue{"x"}, ParamValue{"y"}}}},
  });
  BOOST_TEST(run(spec, 2).final.started == 6U);
}

BOOST_AUTO_TEST_CASE(max_mode_reports_an_accuracy_like_score) {
  auto spec = study(SchedulerType::Asha, 100);
  spec.mode = Mode::Max;
  const auto s = run(spec, 4);
  BOOST_TEST(*s.final.best_value > 0.5);
  BOOST_TEST(*s.final.best_value < 1.0);
}

BOOST_AUTO_TEST_CASE(allocations_end_and_every_trial_still_ends_once) {
  for (const auto type : {SchedulerType::Asha, SchedulerType::AshaPromotion}) {
    StudySpec s = study(type, 200);
    s.simulate.step_time_s = 60;
    SimulationOptions naive, clocked;
    naive.workers = clocked.workers = 8;
    naive.allocation_s = clocked.allocation_s = 3600;
    naive.startup_s = clocked.startup_s = 300;
    naive.allocation_clock = false;
    Ledger naive_ledger, clocked_ledger;
    const auto without = simulate_study(s, naive, &naive_ledger);
    const auto with = simulate_study(s, clocked, &clocked_ledger);
    for (const auto* ledger : {&naive_ledger, &clocked_ledger}) {
      BOOST_TEST(ledger->started == 200u);
      BOOST_TEST(ledger->ends.size() == 200u);
      for (const auto& [trial, ends] : ledger->ends)
        BOOST_TEST(ends == 1, "trial " << trial);
    }
    BOOST_REQUIRE(without.allocation && with.allocation);
    // Late launches outlive the allocation without the clock; with it nothing is lost.
    BOOST_TEST(without.allocation->killed > 0u);
    BOOST_TEST(without.allocation->lost_s > 0.0);
    BOOST_TEST(with.allocation->lost_s == 0.0);
    BOOST_TEST(with.allocation->busy_s < without.allocation->busy_s);
    BOOST_TEST(with.allocation->allocations >= 2u);
    BOOST_TEST(with.allocation->startup_s >= 200 * 300.0);
  }
}

BOOST_AUTO_TEST_CASE(an_allocation_shorter_than_its_margin_is_refused) {
  SimulationOptions o;
  o.allocation_s = 200;
  BOOST_CHECK_THROW(simulate_study(study(SchedulerType::Asha, 5), o, nullptr),
                    slurmtune::InputError);
}

BOOST_AUTO_TEST_CASE(a_start_up_longer_than_an_allocation_ends_the_simulation) {
  // Every attempt is killed before its first report, allocation after allocation: the
  // simulation must end with the reason instead of requeueing forever.
  SimulationOptions o;
  o.allocation_s = 600;
  o.end_margin_s = 100;
  o.startup_s = 1000;
  try {
    simulate_study(study(SchedulerType::Asha, 5), o, nullptr);
    BOOST_FAIL("no error");
  } catch (const slurmtune::InputError& e) {
    BOOST_TEST(std::string(e.what()).find("no trial reported in 3 allocations") !=
               std::string::npos);
  }
}

namespace {
// A PBT study over lr (mutated) on `objective`, without noise.
StudySpec pbt_study(const std::string& objective, std::uint64_t population, bool synch = false) {
  StudySpec s = study(SchedulerType::Pbt, population);
  s.simulate.objective = objective;
  s.simulate.noise = 0;
  s.scheduler.max_t = 40;
  s.scheduler.pbt.perturbation_interval = 4;
  s.scheduler.pbt.synch = synch;
  s.scheduler.pbt.population = population;
  PbtMutation lr;
  lr.param = 0;
  lr.name = "lr";
  lr.domain = s.space.parameters()[0].domain;
  s.scheduler.pbt.mutations = {lr};
  return s;
}

struct ExploitLog final : SimulationObserver {
  std::vector<std::pair<TrialId, Exploit>> exploits;
  std::map<TrialId, std::vector<std::pair<double, double>>> reports;  // (step, value)
  std::map<TrialId, int> ends;
  void trial_exploited(TrialId t, const Exploit& e, double) override {
    exploits.emplace_back(t, e);
  }
  void reported(TrialId t, double step, const std::vector<double>& metrics, const ReportOutcome&,
                double) override {
    reports[t].emplace_back(step, metrics.front());
  }
  void trial_ended(TrialId t, TrialEnd, double) override { ++ends[t]; }
};
}  // namespace

BOOST_AUTO_TEST_CASE(pbt_trials_continue_from_their_donor_s_state) {
  for (const std::string objective : {"bowl", "schedule"}) {
    for (const bool synch : {false, true}) {
      BOOST_TEST_INFO(objective << (synch ? ", synch" : ", async"));
      ExploitLog log;
      SimulationOptions options;
      options.workers = 3;  // fewer than the population: trials take turns
      const auto summary = simulate_study(pbt_study(objective, 6, synch), options, &log);
      BOOST_TEST(summary.final.started == 6u);
      BOOST_TEST(summary.final.completed == 6u);
      for (const auto& [trial, count] : log.ends)
        BOOST_TEST(count == 1);
      BOOST_REQUIRE(!log.exploits.empty());
      // The exploited trial goes on from the donor's state at the donor's step: its first
      // new report is one step past it and close to the donor's value there (one step of
      // a new configuration moves the loss little; a fresh start would begin near 2.5).
      for (const auto& exploited : log.exploits) {
        const TrialId trial = exploited.first;
        const Exploit& e = exploited.second;  // a lambda may not capture a structured binding
        const auto& donor = log.reports.at(e.donor);
        const auto at = std::find_if(donor.begin(), donor.end(),
                                     [&](const auto& r) { return r.first == e.donor_step; });
        BOOST_REQUIRE(at != donor.end());
        const auto& own = log.reports.at(trial);
        const auto next = std::find_if(own.begin(), own.end(),
                                       [&](const auto& r) { return r.first == e.donor_step + 1; });
        BOOST_REQUIRE(next != own.end());
        BOOST_TEST(std::fabs(next->second - at->second) < 0.5);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(pbt_runs_are_deterministic) {
  ExploitLog a, b;
  SimulationOptions options;
  options.workers = 4;
  simulate_study(pbt_study("schedule", 8), options, &a);
  simulate_study(pbt_study("schedule", 8), options, &b);
  BOOST_REQUIRE(a.exploits.size() == b.exploits.size());
  for (std::size_t i = 0; i < a.exploits.size(); ++i) {
    BOOST_TEST(a.exploits[i].first == b.exploits[i].first);
    BOOST_TEST(a.exploits[i].second.donor == b.exploits[i].second.donor);
    BOOST_TEST((a.exploits[i].second.config == b.exploits[i].second.config));
  }
}

BOOST_AUTO_TEST_CASE(recorded_curves_cannot_simulate_pbt) {
  CurveTable table;
  SimulationOptions options;
  options.curves = &table;
  BOOST_CHECK_THROW(simulate_study(pbt_study("bowl", 4), options, nullptr), slurmtune::InputError);
}

// --- several objectives -------------------------------------------------------------

namespace {
StudySpec two_objective_study(SchedulerType type) {
  StudySpec s = study(type, 60);
  s.objectives = {{"loss", Mode::Min}, {"latency", Mode::Max}};
  s.metrics = {"loss", "latency"};
  s.scheduler.objectives = s.objectives;
  s.scheduler.metric_columns = s.metrics;
  s.sampler.objectives = s.objectives;
  s.sampler.metric_columns = s.metrics;
  return s;
}

// Every report's metric row.
struct Rows final : SimulationObserver {
  std::vector<std::vector<double>> rows;
  void reported(TrialId, double, const std::vector<double>& metrics, const ReportOutcome&,
                double) override {
    rows.push_back(metrics);
  }
};
}  // namespace

BOOST_AUTO_TEST_CASE(a_study_of_two_objectives_reports_both_and_has_a_hypervolume) {
  auto s = two_objective_study(SchedulerType::Asha);  // MO-ASHA
  s.sampler.kind = SamplerKind::Nsga2;
  s.sampler.nsga2.population_size = 6;
  Rows rows;
  SimulationOptions options;
  options.workers = 4;
  simulate_study(s, options, &rows);
  BOOST_TEST(!rows.rows.empty());
  for (const auto& row : rows.rows) {
    BOOST_TEST(row.size() == 2U);
    BOOST_TEST(!std::isnan(row[1]));  // the second objective at every report
    BOOST_TEST(row[1] <= 1.0);        // maximised: 1 - cost
  }
  const auto sim = simulate_repeated(s, options, 3);
  BOOST_TEST(sim.reference.size() == 2U);
  for (const auto* series : {&sim.study, &sim.baseline})
    for (const auto& run : series->runs) {
      BOOST_TEST(!run.completed.empty());
      BOOST_TEST(!run.hypervolume.empty());
      for (std::size_t i = 1; i < run.hypervolume.size(); ++i) {
        BOOST_TEST(run.hypervolume[i].second > run.hypervolume[i - 1].second);
        BOOST_TEST(run.hypervolume[i].first >= run.hypervolume[i - 1].first);
      }
      for (const auto& c : run.completed)  // every point inside the reference box
        for (std::size_t k = 0; k < 2; ++k)
          BOOST_TEST(c.loss[k] <= sim.reference[k]);
    }
  // The same seeds, the same figures.
  const auto again = simulate_repeated(s, options, 3);
  BOOST_TEST((again.study.runs[2].hypervolume == sim.study.runs[2].hypervolume));
}

BOOST_AUTO_TEST_CASE(the_hypervolume_trace_rises_only_with_the_front) {
  // Losses; reference (4, 4). (1,3): 3. (3,1) adds 3 - the overlap 1: 5. (2,2) adds 1: 6.
  // (3,3) is dominated and adds nothing; (5,0) lies beyond the reference.
  const std::vector<CompletedPoint> completed = {
      {1, {1, 3}}, {2, {3, 3}}, {3, {3, 1}}, {4, {5, 0}}, {5, {2, 2}}};
  const auto trace = hypervolume_trace(completed, {4, 4});
  BOOST_TEST(trace.size() == 3U);
  BOOST_TEST((trace[0] == std::pair<double, double>{1, 3}));
  BOOST_TEST((trace[1] == std::pair<double, double>{3, 5}));
  BOOST_TEST((trace[2] == std::pair<double, double>{5, 6}));
}

// Issue #41 (15): the trace keeps the front and adds each point's exclusive volume; the
// same figures as WFG over every point so far, with three objectives and 400 points
// (every point went into WFG after each completion: over 100 s at 250 points).
BOOST_AUTO_TEST_CASE(the_hypervolume_trace_is_wfg_over_every_point_so_far) {
  std::vector<CompletedPoint> completed;
  std::uint64_t state = 42;
  const auto uniform = [&state] {  // splitmix64: fixed numbers on every machine
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
  };
  for (int i = 0; i < 400; ++i) {
    const double a = uniform(), b = uniform();
    completed.push_back({static_cast<double>(i), {a, b, 1.5 - a - b + 0.3 * uniform()}});
  }
  const std::vector<double> reference = {1.1, 1.1, 1.6};
  const auto trace = hypervolume_trace(completed, reference);
  BOOST_REQUIRE(!trace.empty());
  // Spot checks against WFG over every point inside the reference up to that time.
  for (const std::size_t at : {std::size_t{0}, trace.size() / 2, trace.size() - 1}) {
    std::vector<std::vector<double>> so_far;
    for (const auto& c : completed)
      if (c.time_s <= trace[at].first && c.loss[0] <= 1.1 && c.loss[1] <= 1.1 && c.loss[2] <= 1.6)
        so_far.push_back(c.loss);
    const double direct = slurmtune::core::tpe::hypervolume(so_far, reference);
    BOOST_TEST(trace[at].second == direct, boost::test_tools::tolerance(1e-9));
  }
  for (std::size_t i = 1; i < trace.size(); ++i)
    BOOST_TEST(trace[i].second > trace[i - 1].second);
}
