// Simulation throughput: a whole study in virtual time, timed on the wall clock.
//   build/tests/bench/bench_simulate [STUDY.toml] [TRIALS] [WORKERS] [REPEATS]
// Defaults: the example study, 1,000,000 trials, 4,096 workers, 3 repeats. Prints each
// run and the median for every scheduler type (same search space and objective).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "config/study_file.hpp"
#include "core/simulation/simulation.hpp"

using namespace slurmtune;

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : SLURMTUNE_EXAMPLE_STUDY;
  const std::uint64_t trials = argc > 2 ? std::stoull(argv[2]) : 1000000;
  const std::size_t workers = argc > 3 ? std::stoul(argv[3]) : 4096;
  const int repeats = argc > 4 ? std::stoi(argv[4]) : 3;
  auto study = config::load_study_file(path);
  std::printf("%-16s %10s %8s %12s %10s %12s\n", "scheduler", "trials", "workers", "reports",
              "median_s", "trials/s");
  for (const auto type :
       {core::SchedulerType::Asha, core::SchedulerType::AshaPromotion,
        core::SchedulerType::Hyperband, core::SchedulerType::Median, core::SchedulerType::Fifo}) {
    study.scheduler.type = type;
    // FIFO and the median rule run far more steps per trial; keep their runs comparable
    // in wall time by simulating a tenth of the trials.
    const bool long_trials =
        type == core::SchedulerType::Fifo || type == core::SchedulerType::Median;
    core::SimulationOptions options;
    options.workers = workers;
    study.max_trials = long_trials ? trials / 10 : trials;
    std::vector<double> times;
    std::uint64_t reports = 0;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const auto summary = core::simulate_study(study, options, nullptr);
      times.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      reports = summary.final.reports;
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    std::printf("%-16s %10llu %8zu %12llu %10.3f %12.0f\n",
                std::string(core::scheduler_keyword(type)).c_str(),
                static_cast<unsigned long long>(study.max_trials), workers,
                static_cast<unsigned long long>(reports), median,
                static_cast<double>(study.max_trials) / median);
  }
}
