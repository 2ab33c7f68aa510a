#define BOOST_TEST_MODULE store_recorded_curves
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <random>

#include "config/study_file.hpp"
#include "core/error.hpp"
#include "store/recorded_curves.hpp"
#include "store/study_writer.hpp"

using namespace slurmtune;
namespace fs = std::filesystem;

namespace {

const char* kStudy = R"(
[study]
name = "recorded"
metric = "loss"
metrics = ["loss", "accuracy"]
[search]
lr = { loguniform = [1e-4, 1e-1] }
opt = { choice = ["sgd", "adam"] }
[scheduler]
type = "asha_promotion"
grace_period = 1
max_t = 9
reduction_factor = 3
)";

struct TempFile {
  fs::path path =
      fs::temp_directory_path() / ("slurmtune-curves-" + std::to_string(getpid()) + "-" +
                                   std::to_string(std::random_device{}()) + ".h5");
  ~TempFile() { fs::remove(path); }
};

core::Configuration config(double lr, const char* opt) {
  return core::Configuration{{core::ParamValue{lr}, core::ParamValue{std::string(opt)}}};
}

void report(store::StudyWriter& w, core::TrialId trial, double step, double time, double loss,
            core::SchedulerDecision decision = core::SchedulerDecision::Continue) {
  const double values[] = {loss, 1 - loss};
  core::ReportOutcome outcome;
  outcome.decision = decision;
  w.report(trial, step, time, values, outcome);
}

// Four trials of a study (virtual clock): a retried attempt, a pause and resume, one
// failing before its first report, one left running.
void write_study(const std::string& path, const core::StudySpec& spec) {
  store::WriterOptions options;
  options.virtual_clock = true;
  auto w = store::StudyWriter::create(path, spec, options);
  w->trial_started(0, config(0.01, "sgd"), 0, 10);
  report(*w, 0, 1, 12, 0.9);
  report(*w, 0, 2, 15, 0.7);
  w->trial_retried(0, 16, "node failure");
  report(*w, 0, 2, 30, 0.7);  // re-run from the checkpoint at step 1: kept once
  report(*w, 0, 3, 33, 0.6);
  w->trial_ended(0, core::TrialEnd::Stopped, 33);
  w->trial_started(1, config(0.001, "adam"), 0, 0);
  report(*w, 1, 1, 4, 0.8, core::SchedulerDecision::Pause);
  w->trial_resumed(1, 50, nullptr);
  report(*w, 1, 2, 53, 0.5);
  w->trial_ended(1, core::TrialEnd::Completed, 53);
  w->trial_started(2, config(0.002, "adam"), 0, 1);
  w->trial_ended(2, core::TrialEnd::Failed, 2, "exit status 1");
  w->trial_started(3, config(0.05, "sgd"), 0, 20);
  report(*w, 3, 1, 21.5, 0.95);
  w->flush();
}

const core::CurveTable::Curve& curve_of(const core::CurveTable& table, double lr) {
  for (std::size_t c = 0; c < table.configurations().size(); ++c)
    if (std::get<double>(table.configurations()[c].values[0]) == lr)
      return table.curve(table.first_curve(c));
  BOOST_FAIL("no configuration with lr " << lr);
  throw;
}

}  // namespace

BOOST_AUTO_TEST_CASE(step_durations_come_from_reports_and_relaunches) {
  TempFile file;
  const auto spec = config::parse_study(kStudy, "study.toml");
  write_study(file.path.string(), spec);
  const auto table = store::read_recorded_curves(file.path.string(), spec);
  BOOST_TEST(table.configurations().size() == 3u);  // trial 2 never reported
  BOOST_TEST(table.point_count() == 6u);

  const auto& retried = curve_of(table, 0.01);
  BOOST_TEST(retried.length == 3u);
  BOOST_TEST((retried.end == core::TrialEnd::Stopped));
  const double expected[] = {2, 3, 3};  // step 3 began when the re-run of step 2 ended
  for (std::uint32_t k = 0; k < 3; ++k) {
    BOOST_TEST(table.point(static_cast<std::uint32_t>(&retried - &table.curve(0)), k).seconds ==
               expected[k]);
  }

  const auto& resumed = curve_of(table, 0.001);
  const auto id = static_cast<std::uint32_t>(&resumed - &table.curve(0));
  BOOST_TEST(table.point(id, 0).seconds == 4.0);
  BOOST_TEST(table.point(id, 1).seconds == 3.0);  // from the resume, not the pause
  BOOST_TEST((resumed.end == core::TrialEnd::Completed));

  const auto& running = curve_of(table, 0.05);
  BOOST_TEST((running.end == core::TrialEnd::Stopped));  // left running: ended there
  BOOST_TEST(table.point(static_cast<std::uint32_t>(&running - &table.curve(0)), 0).seconds == 1.5);
}

BOOST_AUTO_TEST_CASE(a_study_that_does_not_fit_is_refused_with_the_fix) {
  TempFile file;
  const auto spec = config::parse_study(kStudy, "study.toml");
  write_study(file.path.string(), spec);
  const auto edited = [](const std::string& replace, const std::string& with) {
    std::string text = kStudy;
    text.replace(text.find(replace), replace.size(), with);
    return config::parse_study(text, "other.toml");
  };
  // Judging another recorded metric is fine: it becomes the curves' value.
  const auto accuracy = store::read_recorded_curves(
      file.path.string(), edited("metric = \"loss\"", "metric = \"accuracy\"\nmode = \"max\""));
  BOOST_TEST(accuracy.best_value(core::Mode::Max) == 1 - 0.5);
  const auto expect = [&](const std::string& replace, const std::string& with,
                          const std::string& message) {
    try {
      store::read_recorded_curves(file.path.string(), edited(replace, with));
      BOOST_FAIL("no error for " << with);
    } catch (const InputError& e) {
      BOOST_TEST(std::string(e.what()).find(message) != std::string::npos, e.what());
      BOOST_TEST(std::string(e.what()).find(file.path.string()) != std::string::npos);
    }
  };
  expect("metric = \"loss\"\nmetrics = [\"loss\", \"accuracy\"]", "metric = \"f1\"",
         "records no metric 'f1' (it records: loss, accuracy)");
  expect("opt =", "optimizer =", "records no parameter 'optimizer'");
  expect("opt = { choice = [\"sgd\", \"adam\"] }\n", "",
         "records the parameter 'opt', which [search] does not declare");
}
