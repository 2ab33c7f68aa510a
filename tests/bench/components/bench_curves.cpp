// Recorded-curve replay against the synthetic objective: the same study simulated on the
// synthetic formula and on a table holding those curves, timed on the wall clock.
//   build/tests/bench/bench_curves [CONFIGS] [TRIALS] [WORKERS] [REPEATS]
// Defaults: 20,000 recorded configurations x 81 steps (1.6M reports, drawn from the
// synthetic objective), 1,000,000 trials with reuse, 4,096 workers, median of 3. Prints
// reports per second for ASHA and FIFO on both objectives, and the time to build the
// table from CSV text.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "config/study_file.hpp"
#include "core/number_text.hpp"
#include "core/simulation/curve_csv.hpp"
#include "core/simulation/simulation.hpp"
#include "core/simulation/synthetic_objective.hpp"

using namespace slurmtune;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The study's first `configs` synthetic curves as a long-form CSV table.
std::string synthetic_table(const core::StudySpec& study, std::uint64_t configs) {
  core::SyntheticObjective objective(study);
  const core::ConfigSampler sampler(study.space, study.sampler.kind, study.seed);
  std::ostringstream csv;
  for (const auto& p : study.space.parameters())
    csv << p.name << ',';
  csv << "step," << study.metric << ",step_seconds\n";
  for (core::TrialId t = 0; t < configs; ++t) {
    const auto curve = *objective.draw(t, {sampler.sample(t), {}});
    const auto config = objective.configuration(curve);
    std::string prefix;
    for (const auto& v : config.values)
      prefix += core::to_text(v) + ',';
    for (std::uint32_t k = 0; k < static_cast<std::uint32_t>(study.scheduler.max_t); ++k) {
      const auto point = *objective.report(curve, t, k);
      csv << prefix << point.step << ',' << core::format_double(point.value) << ','
          << core::format_double(point.seconds) << '\n';
    }
  }
  return csv.str();
}

struct Timing {
  double median_s;
  std::uint64_t reports;
};

Timing time_runs(const core::StudySpec& study, const core::SimulationOptions& options,
                 int repeats) {
  std::vector<double> times;
  std::uint64_t reports = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    reports = core::simulate_study(study, options, nullptr).final.reports;
    times.push_back(seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  return Timing{times[times.size() / 2], reports};
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t configs = argc > 1 ? std::stoull(argv[1]) : 20000;
  const std::uint64_t trials = argc > 2 ? std::stoull(argv[2]) : 1000000;
  const std::size_t workers = argc > 3 ? std::stoul(argv[3]) : 4096;
  const int repeats = argc > 4 ? std::stoi(argv[4]) : 3;
  auto study = config::load_study_file(SLURMTUNE_EXAMPLE_STUDY);
  study.sampler.kind = core::SamplerKind::Random;

  const std::string csv = synthetic_table(study, configs);
  auto start = std::chrono::steady_clock::now();
  std::istringstream in(csv);
  const auto table = core::read_curve_csv(in, "bench.csv", study);
  const double load_s = seconds_since(start);
  std::printf(
      "table: %zu configurations, %zu reports, %.1f MB of CSV read in %.2f s (%.0f rows/s)\n\n",
      table.configurations().size(), table.point_count(), csv.size() / 1e6, load_s,
      static_cast<double>(table.point_count()) / load_s);

  std::printf("%-10s %-10s %10s %12s %10s %14s\n", "scheduler", "objective", "trials", "reports",
              "median_s", "reports/s");
  for (const auto type : {core::SchedulerType::Asha, core::SchedulerType::Fifo}) {
    study.scheduler.type = type;
    study.max_trials = type == core::SchedulerType::Fifo ? trials / 10 : trials;
    for (const bool recorded : {false, true}) {
      core::SimulationOptions options;
      options.workers = workers;
      if (recorded) {
        options.curves = &table;
        options.reuse_configurations = true;
      }
      const Timing t = time_runs(study, options, repeats);
      std::printf("%-10s %-10s %10llu %12llu %10.3f %14.0f\n",
                  std::string(core::scheduler_keyword(type)).c_str(),
                  recorded ? "recorded" : "synthetic",
                  static_cast<unsigned long long>(study.max_trials),
                  static_cast<unsigned long long>(t.reports), t.median_s,
                  static_cast<double>(t.reports) / t.median_s);
    }
  }
}
