#define BOOST_TEST_MODULE core_curve_table
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/simulation/curve_csv.hpp"
#include "core/simulation/recorded_objective.hpp"
#include "core/simulation/repeated.hpp"
#include "core/simulation/simulation.hpp"

using namespace slurmtune::core;

namespace {

StudySpec study(SchedulerType type = SchedulerType::Fifo) {
  StudySpec s;
  s.name = "curves";
  s.metric = "loss";
  s.metrics = {"loss", "acc"};
  s.seed = 5;
  s.max_trials = 1000;
  s.space = SearchSpace({
      Parameter{"lr", Domain{DomainKind::LogUniform, 1e-4, 1e-1, 0, {}}},
      Parameter{"opt",
                Domain{DomainKind::Choice, 0, 0, 0, {ParamValue{"sgd"}, ParamValue{"adam"}}}},
  });
  s.scheduler.type = type;
  s.scheduler.max_t = 4;
  s.scheduler.grace_period = 1;
  s.scheduler.reduction_factor = 2;
  return s;
}

CurveTable read(const std::string& csv, const StudySpec& s = study()) {
  std::istringstream in(csv);
  return read_curve_csv(in, "t.csv", s);
}

// Expects read() to throw an InputError whose message contains every fragment.
void expect_error(const std::string& csv, std::initializer_list<std::string> fragments,
                  const StudySpec& s = study()) {
  try {
    read(csv, s);
    BOOST_FAIL("no error for:\n" + csv);
  } catch (const slurmtune::InputError& e) {
    for (const auto& f : fragments)
      BOOST_TEST(std::string(e.what()).find(f) != std::string::npos,
                 "'" << f << "' missing from: " << e.what());
  }
}

// Four configurations, each four steps of one second, loss = lr * 10 / step, except
// the last: stopped after step 2 in the recorded study.
std::string four_configs() {
  std::string csv = "lr,opt,step,loss,step_seconds,status\n";
  const char* configs[][2] = {
      {"0.001", "sgd"}, {"0.002", "adam"}, {"0.004", "sgd"}, {"0.008", "adam"}};
  for (int c = 0; c < 4; ++c)
    for (int step = 1; step <= (c == 3 ? 2 : 4); ++step) {
      const double loss = std::stod(configs[c][0]) * 10 / step;
      csv += std::string(configs[c][0]) + "," + configs[c][1] + "," + std::to_string(step) + "," +
             format_double(loss) + ",1," + (c == 3 ? "stopped" : "completed") + "\n";
    }
  return csv;
}

// Records every report per configuration.
struct Reports final : SimulationObserver {
  std::map<TrialId, Configuration> config;
  std::map<TrialId, std::vector<std::pair<double, double>>> points;  // (step, value)
  std::map<TrialId, TrialEnd> ends;
  std::map<TrialId, double> started_at;
  std::vector<double> times;
  void trial_started(TrialId t, const Configuration& c, int, const SuggestionInfo&,
                     double time_s) override {
    config[t] = c;
    started_at[t] = time_s;
  }
  void reported(TrialId t, double step, const std::vector<double>& metrics, const ReportOutcome&,
                double time_s) override {
    points[t].emplace_back(step, metrics.front());
    times.push_back(time_s - started_at[t]);
  }
  void trial_ended(TrialId t, TrialEnd how, double) override { ends[t] = how; }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_long_form_table_reads_into_curves_sorted_by_step) {
  const auto table = read(
      "opt,lr,step,acc,loss,step_seconds\n"
      "sgd,0.01,2,0.5,0.4,2\n"
      "\"sgd\",0.01,1,0.3,0.9,1.5\r\n"
      "\n"
      "adam,0.001,1,0.2,nan,3\n");
  BOOST_TEST(table.configurations().size() == 2u);
  BOOST_TEST(table.curve_count() == 2u);
  const auto& first = table.curve(table.first_curve(0));
  BOOST_TEST(first.length == 2u);
  BOOST_TEST(table.point(0, 0).step == 1.0);
  BOOST_TEST(table.point(0, 0).value == 0.9);
  BOOST_TEST(table.point(0, 0).seconds == 1.5);
  BOOST_TEST(table.point(0, 1).value == 0.4);
  BOOST_TEST(std::isnan(table.point(1, 0).value));  // a diverged report stays NaN
  BOOST_TEST(table.best_value(Mode::Min) == 0.4);
  BOOST_TEST(std::get<double>(table.configurations()[0].values[0]) == 0.01);
  BOOST_TEST(std::get<std::string>(table.configurations()[0].values[1]) == "sgd");
}

BOOST_AUTO_TEST_CASE(cumulative_elapsed_seconds_become_step_durations) {
  const auto table = read(
      "lr,opt,step,loss,elapsed_seconds,seed\n"
      "0.01,sgd,1,0.9,2,0\n"
      "0.01,sgd,2,0.5,5,0\n"
      "0.01,sgd,1,0.8,1,1\n"
      "0.01,sgd,2,0.6,4,1\n");
  BOOST_TEST(table.configurations().size() == 1u);
  BOOST_TEST(table.repeats(0) == 2u);  // two seeds of one configuration
  BOOST_TEST(table.point(0, 1).seconds == 3.0);
  BOOST_TEST(table.point(1, 0).seconds == 1.0);
  BOOST_TEST(table.point(1, 1).seconds == 3.0);
}

BOOST_AUTO_TEST_CASE(every_malformed_table_names_file_line_and_column) {
  expect_error("", {"t.csv", "empty file"});
  expect_error("lr,step,loss,step_seconds\n", {"t.csv:1", "'opt'", "rename"});
  expect_error("lr,opt,step,loss,step_seconds,momentum\n",
               {"t.csv:1", "'momentum'", "add it to [search]"});
  expect_error("lr,opt,loss,step_seconds\n", {"t.csv:1", "'step'"});
  expect_error("lr,opt,step,step_seconds\n", {"t.csv:1", "metric 'loss'"});
  expect_error("lr,opt,step,loss\n", {"t.csv:1", "step_seconds or elapsed_seconds"});
  expect_error("lr,opt,step,loss,step_seconds,elapsed_seconds\n", {"keep one"});
  expect_error("lr,opt,step,loss,step_seconds\n0.01,sgd,1,0.5\n",
               {"t.csv:2", "4 fields", "5 columns"});
  expect_error("lr,opt,step,loss,step_seconds\n0.01,sgd,one,0.5,1\n",
               {"t.csv:2", "column 'step'", "'one' is not a number"});
  expect_error("lr,opt,step,loss,step_seconds\nfast,sgd,1,0.5,1\n",
               {"t.csv:2", "column 'lr'", "'fast'", "loguniform"});
  expect_error("lr,opt,step,loss,step_seconds\n0.01,sgd,nan,0.5,1\n",
               {"t.csv:2", "column 'step'", "NaN is allowed in metric columns only"});
  expect_error("lr,opt,step,loss,step_seconds\n0.01,sgd,1,,1\n",
               {"t.csv:2", "column 'loss'", "empty"});
  expect_error("lr,opt,step,loss,step_seconds\n0.01,sgd,1,0.5,-1\n",
               {"t.csv", "line 2", "durations must be finite and >= 0"});
  expect_error("lr,opt,step,loss,step_seconds\n0.01,\"sgd,1,0.5,1\n", {"t.csv:2", "not closed"});
  expect_error("lr,opt,step,loss,step_seconds,status\n0.01,sgd,1,0.5,1,paused\n",
               {"t.csv:2", "column 'status'", "'paused'"});
}

BOOST_AUTO_TEST_CASE(duplicate_steps_and_shrinking_elapsed_times_are_errors) {
  expect_error("lr,opt,step,loss,step_seconds\n0.01,sgd,1,0.5,1\n0.01,sgd,1,0.4,1\n",
               {"t.csv", "line 2 and line 3", "both give step 1", "keep one row per step"});
  expect_error("lr,opt,step,loss,elapsed_seconds\n0.01,sgd,1,0.5,4\n0.01,sgd,2,0.4,3\n",
               {"t.csv", "line 3", "elapsed_seconds 3", "must not decrease"});
  // The same step of two seeds is two curves, not a duplicate.
  BOOST_CHECK_NO_THROW(
      read("lr,opt,step,loss,step_seconds,repeat\n0.01,sgd,1,0.5,1,a\n"
           "0.01,sgd,1,0.4,1,b\n"));
}

BOOST_AUTO_TEST_CASE(configurations_outside_a_narrower_space_are_left_out) {
  const auto table = read(
      "lr,opt,step,loss,step_seconds\n"
      "0.01,sgd,1,0.5,1\n"
      "0.5,sgd,1,0.1,1\n"         // lr above the domain
      "0.01,rmsprop,1,0.2,1\n");  // a choice the study does not list
  BOOST_TEST(table.configurations().size() == 1u);
  BOOST_TEST(table.excluded() == 2u);
  BOOST_TEST(table.excluded_example().find("lr = 0.5 is outside") != std::string::npos);
  expect_error("lr,opt,step,loss,step_seconds\n0.5,sgd,1,0.1,1\n",
               {"no recorded configuration lies inside", "widen [search]"});
}

BOOST_AUTO_TEST_CASE(the_samplers_draw_each_recorded_configuration_once) {
  const auto table = read(four_configs());
  for (const auto kind : {SamplerKind::Random, SamplerKind::Halton, SamplerKind::Grid}) {
    auto s = study();
    s.sampler.kind = kind;
    RecordedObjective objective(table, s, false);
    std::set<std::size_t> seen;
    for (TrialId t = 0; t < 4; ++t)
      seen.insert(table.curve(static_cast<std::uint32_t>(*objective.draw(t, {}))).config);
    BOOST_TEST(seen.size() == 4u);
    BOOST_TEST(!objective.draw(4, {}).has_value());
    if (kind == SamplerKind::Grid) BOOST_TEST(*seen.begin() == 0u);
  }
  auto s = study();
  RecordedObjective reuse(table, s, true);
  for (TrialId t = 0; t < 20; ++t)
    BOOST_TEST(reuse.draw(t, {}).has_value());
}

// nearest_random (simulate --nearest-draws): the random sampler's draw goes to the
// configuration nearest to its point, as a model sampler's suggestion does; by default
// it is uniform among the configurations not yet drawn, whatever the point.
BOOST_AUTO_TEST_CASE(nearest_random_draws_map_the_random_point_like_a_suggestion) {
  const auto table = read(four_configs());  // lr 0.001 sgd, 0.002 adam, 0.004 sgd, 0.008 adam
  const auto s = study();                   // the random sampler
  const auto at = [](double lr, const char* opt) {
    Suggestion sug;
    sug.config = Configuration({ParamValue{lr}, ParamValue{std::string(opt)}});
    return sug;
  };
  const auto config_of = [&](std::optional<CurveId> curve) {
    return table.curve(static_cast<std::uint32_t>(*curve)).config;
  };
  RecordedObjective nearest(table, s, false, true);
  BOOST_TEST(config_of(nearest.draw(0, at(0.0079, "adam"))) == 3u);
  // 0.008 adam is taken: the next nearest is 0.002 adam (0.2 away in the unit square),
  // not 0.004 sgd (0.1 in lr but 0.5 in the choice).
  BOOST_TEST(config_of(nearest.draw(1, at(0.0079, "adam"))) == 1u);
  RecordedObjective uniform_a(table, s, false), uniform_b(table, s, false);
  for (TrialId t = 0; t < 4; ++t)
    BOOST_TEST(config_of(uniform_a.draw(t, at(0.0079, "adam"))) ==
               config_of(uniform_b.draw(t, at(0.001, "sgd"))));
}

BOOST_AUTO_TEST_CASE(fifo_replays_every_recorded_curve_exactly) {
  const auto table = read(four_configs());
  Reports reports;
  SimulationOptions options;
  options.workers = 2;
  options.curves = &table;
  const auto summary = simulate_study(study(), options, &reports);
  BOOST_TEST(summary.final.started == 4u);  // the table is exhausted: max_trials capped
  BOOST_TEST(summary.final.reports == 14u);
  for (const auto& [trial, points] : reports.points) {
    const double lr = std::get<double>(reports.config[trial].values[0]);
    for (std::size_t k = 0; k < points.size(); ++k) {
      BOOST_TEST(points[k].first == k + 1.0);
      BOOST_TEST(points[k].second == lr * 10 / (k + 1.0));
    }
    // The run stopped at step 2 ends there as it was recorded, the others complete.
    BOOST_TEST((reports.ends[trial] == (lr == 0.008 ? TrialEnd::Stopped : TrialEnd::Completed)));
  }
  BOOST_TEST(summary.ended_as_recorded == 1u);
  for (std::size_t i = 0; i < reports.times.size(); ++i)
    BOOST_TEST(reports.times[i] == std::round(reports.times[i]));  // one-second steps
  BOOST_TEST(*summary.final.best_value == 0.0025);
}

BOOST_AUTO_TEST_CASE(promotions_past_the_recorded_end_are_ended_not_invented) {
  // Every curve stops at step 2, short of max_t = 4: ASHA's promotion variant pauses at
  // rungs 1 and 2 and promotes the best, which has nothing recorded past step 2.
  std::string csv = "lr,opt,step,loss,step_seconds,status\n";
  for (int c = 0; c < 8; ++c)
    for (int step = 1; step <= 2; ++step)
      csv += format_double(0.001 * (c + 1)) + ",sgd," + std::to_string(step) + "," +
             format_double(1.0 / (c + step)) + ",1,stopped\n";
  const auto table = read(csv);
  Reports reports;
  SimulationOptions options;
  options.workers = 1;
  options.curves = &table;
  const auto summary = simulate_study(study(SchedulerType::AshaPromotion), options, &reports);
  BOOST_TEST(summary.final.started == 8u);
  BOOST_TEST(summary.beyond_recorded >= 1u);
  BOOST_TEST(summary.ended_as_recorded >= summary.beyond_recorded);
  for (const auto& [trial, points] : reports.points)
    BOOST_TEST(points.back().first <= 2.0);  // nothing past the recorded end
  BOOST_TEST(reports.ends.size() == 8u);
}

BOOST_AUTO_TEST_CASE(repeated_runs_summarise_against_the_baseline) {
  const auto table = read(four_configs());
  SimulationOptions options;
  options.workers = 1;
  options.curves = &table;
  auto s = study(SchedulerType::Asha);
  s.simulate.target = 0.0025;
  const auto sim = simulate_repeated(s, options, 5);
  BOOST_TEST(sim.study.runs.size() == 5u);
  BOOST_TEST(sim.baseline.runs.size() == 5u);
  BOOST_TEST(sim.study.runs[3].seed == 8u);
  for (const auto& run : sim.baseline.runs) {
    // Random search without stopping runs all 14 recorded steps on one worker.
    BOOST_TEST(run.summary.final.reports == 14u);
    BOOST_TEST(run.compute_s == 14.0);
    BOOST_TEST(run.summary.time_to_target_s.has_value());
  }
  // Jobs in any order (as a thread pool runs them) give the same runs.
  const auto reversed = [](std::size_t count, const std::function<void(std::size_t)>& job) {
    for (std::size_t i = count; i-- > 0;)
      job(i);
  };
  const auto again = simulate_repeated(s, options, 5, reversed);
  for (std::size_t k = 0; k < 5; ++k) {
    BOOST_TEST(again.study.runs[k].best == sim.study.runs[k].best);
    BOOST_TEST(again.baseline.runs[k].seed == sim.baseline.runs[k].seed);
    BOOST_TEST(again.baseline.runs[k].compute_s == sim.baseline.runs[k].compute_s);
  }
}

BOOST_AUTO_TEST_CASE(quartiles_count_missing_values_as_worst) {
  const auto q = quartiles({1.0, 2.0, 3.0, 4.0, 5.0}, true);
  BOOST_TEST(*q.median == 3.0);
  BOOST_TEST(*q.q25 == 2.0);
  BOOST_TEST(*q.q75 == 4.0);
  const auto missing = quartiles({1.0, std::nullopt, 2.0, std::nullopt}, true);
  BOOST_TEST(!missing.median.has_value());
  BOOST_TEST(missing.q25.has_value());
  BOOST_TEST(missing.q25.value_or(0) == 1.75);
  BOOST_TEST(missing.present == 2u);
  const auto higher = quartiles({0.9, 0.5, std::nullopt}, false);
  BOOST_TEST(*higher.median == 0.5);
  BOOST_TEST(higher.q75.value_or(0) == 0.7);
  BOOST_TEST(!higher.q25.has_value());
  const BestSoFar trace{{1.0, 5.0}, {3.0, 2.0}};
  BOOST_TEST(!best_at(trace, 0.5).has_value());
  BOOST_TEST(*best_at(trace, 2.0) == 5.0);
  BOOST_TEST(*best_at(trace, 3.0) == 2.0);
}
