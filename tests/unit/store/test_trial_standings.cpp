#define BOOST_TEST_MODULE store_trial_standings
// Issue #63, item 1: /trials keeps each trial's standing (every objective's last value,
// the constraints, where its best report is), and readers take it from there instead of
// passing over /metrics. The summaries must say exactly what every report says.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "config/study_file.hpp"
#include "core/objectives/objectives.hpp"
#include "store/objective_values.hpp"
#include "store/study_reader.hpp"
#include "store/study_writer.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Two objectives (one maximized) among three metrics, and a constraint on the third.
const char* kStudy = R"(
[study]
name = "standings"
metric = ["loss", "accuracy"]
mode = ["min", "max"]
metrics = ["mem_gb"]
constraints = ["mem_gb <= 4.0"]
max_trials = 40
[search]
x = { uniform = [0, 1] }
[scheduler]
type = "fifo"
max_t = 10
)";

core::StudySpec spec(const char* text = kStudy) {
  return config::parse_study(text, "study.toml");
}

// 40 trials reporting random values, each metric missing from a report now and then,
// some trials never reporting a metric at all, some failing: what the summaries must
// follow (a missing value keeps the last one).
void write_study(const std::string& path, const core::StudySpec& s, std::int64_t schema) {
  store::WriterOptions options;
  options.virtual_clock = true;
  options.schema_version = schema;
  auto writer = store::StudyWriter::create(path, s, options);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> value(0, 8);
  std::bernoulli_distribution missing(0.3);
  double time = 0;
  for (core::TrialId t = 0; t < 40; ++t) {
    core::Configuration config;
    config.values.emplace_back(value(rng) / 8);
    writer->trial_started(t, config, 0, time += 1);
    const int reports = static_cast<int>(t % 6);  // trial 0, 6, 12, ...: none
    for (int step = 1; step <= reports; ++step) {
      std::vector<double> values(s.metrics.size());
      for (std::size_t m = 0; m < values.size(); ++m)
        values[m] = missing(rng) || (t % 7 == 3 && m == 2) ? kNaN : value(rng);
      writer->report(t, step, time += 0.5, values, {});
    }
    writer->trial_ended(t, t % 9 == 4 ? core::TrialEnd::Failed : core::TrialEnd::Completed,
                        time += 0.1, t % 9 == 4 ? "exit status 1" : "");
  }
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

void check_same_standings(const std::vector<store::TrialStanding>& summary,
                          const std::vector<store::TrialStanding>& full) {
  BOOST_TEST_REQUIRE(summary.size() == full.size());
  for (std::size_t t = 0; t < full.size(); ++t) {
    BOOST_TEST_CONTEXT("trial " << t) {
      BOOST_TEST_REQUIRE(summary[t].objectives.size() == full[t].objectives.size());
      for (std::size_t k = 0; k < full[t].objectives.size(); ++k)
        BOOST_TEST(same(summary[t].objectives[k], full[t].objectives[k]));
      BOOST_TEST(summary[t].feasible == full[t].feasible);
      BOOST_TEST(summary[t].constraints.has_value() == full[t].constraints.has_value());
      if (summary[t].constraints && full[t].constraints)
        BOOST_TEST(*summary[t].constraints == *full[t].constraints,
                   boost::test_tools::per_element());
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(summaries_in_trials_equal_a_pass_over_every_report) {
  testing::TempFolder dir;
  const auto s = spec();
  write_study(dir.file("v10.h5"), s, store::kSchemaVersion);
  const store::StudyReader reader(dir.file("v10.h5"));
  BOOST_TEST(reader.layout().has_objective_columns());
  const auto trials = reader.trials();
  const auto summary = store::trial_standings(reader, trials);
  check_same_standings(summary, store::trial_standings_from_metrics(reader, trials.size()));
  // The file is not trivial: some trials feasible, some not, some never reported a value.
  std::size_t feasible = 0, unreported = 0;
  for (const auto& standing : summary) {
    feasible += standing.feasible;
    unreported += std::isnan(standing.objectives[1]);
  }
  BOOST_TEST(feasible > 3U);
  BOOST_TEST(feasible < 30U);
  BOOST_TEST(unreported > 3U);
  // The Pareto front is the same whichever way the standings were read.
  BOOST_TEST(store::pareto_front(s, trials, summary) ==
                 store::pareto_front(s, trials, store::trial_standings_from_metrics(reader, 40)),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(best_seq_is_the_report_of_the_best_value) {
  // /trials.best_seq is the sequence number of the first report of best_value, which
  // `best` and the Python module used to search every report for.
  testing::TempFolder dir;
  write_study(dir.file("v10.h5"), spec(), store::kSchemaVersion);
  const store::StudyReader reader(dir.file("v10.h5"));
  const auto trials = reader.trials();
  std::vector<std::optional<std::uint64_t>> first_best(trials.size());
  reader.for_each_metric([&](const store::MetricRecord& m) {
    const auto& t = trials[m.trial];
    if (!first_best[m.trial] && m.values[0] == t.best_value && m.step == t.best_step)
      first_best[m.trial] = m.seq;
  });
  std::size_t with_best = 0;
  for (const auto& t : trials) {
    BOOST_TEST_CONTEXT("trial " << t.id) {
      BOOST_TEST(t.best_seq.has_value() == !std::isnan(t.best_value));
      BOOST_TEST((t.best_seq == first_best[t.id]));
      with_best += t.best_seq.has_value();
    }
  }
  BOOST_TEST(with_best > 20U);
}

BOOST_AUTO_TEST_CASE(a_schema_9_file_has_no_summaries_and_reads_its_reports) {
  // Files of schema 9 and older have no objective/<metric> columns: their standings come
  // from one pass over /metrics, and are what a schema-10 file of the same study says.
  testing::TempFolder dir;
  const auto s = spec();
  write_study(dir.file("v9.h5"), s, 9);
  write_study(dir.file("v10.h5"), s, store::kSchemaVersion);
  const store::StudyReader old_file(dir.file("v9.h5")), new_file(dir.file("v10.h5"));
  BOOST_TEST(!old_file.layout().has_objective_columns());
  const auto old_trials = old_file.trials();
  BOOST_TEST(!old_trials[1].best_seq.has_value());
  BOOST_TEST(old_trials[1].objectives.empty());
  check_same_standings(store::trial_standings(old_file, old_trials),
                       store::trial_standings(new_file, new_file.trials()));
}

BOOST_AUTO_TEST_CASE(one_objective_without_constraints_keeps_its_last_reported_value) {
  // One objective: `objective/loss` is its last non-NaN value, which `last_value` is not
  // when the last report lacks the metric.
  testing::TempFolder dir;
  const auto s = spec(R"(
[study]
name = "one"
metric = "loss"
metrics = ["aux"]
max_trials = 2
[search]
x = { uniform = [0, 1] }
[scheduler]
type = "fifo"
max_t = 3
)");
  {
    store::WriterOptions options;
    options.virtual_clock = true;
    auto writer = store::StudyWriter::create(dir.file("one.h5"), s, options);
    core::Configuration config;
    config.values.emplace_back(0.5);
    writer->trial_started(0, config, 0, 1);
    const std::vector<double> first{2.5, 1}, second{kNaN, 2};
    writer->report(0, 1, 2, first, {});
    writer->report(0, 2, 3, second, {});
  }
  const store::StudyReader reader(dir.file("one.h5"));
  const auto trials = reader.trials();
  BOOST_TEST(std::isnan(trials[0].last_value));
  BOOST_TEST(trials[0].objectives == std::vector<double>{2.5}, boost::test_tools::per_element());
  check_same_standings(store::trial_standings(reader, trials),
                       store::trial_standings_from_metrics(reader, trials.size()));
}
