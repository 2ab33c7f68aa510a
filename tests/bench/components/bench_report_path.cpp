// The study controller's part of a report on the coordinator's loop at size: TRIALS
// trials running at once (fifo, random sampler: no scheduler or sampler work to speak
// of), each reporting STEPS steps, round after round in an order shuffled each round, as a
// fleet of trials that report every second does (their reports arrive in no order of id). Prints
// the reports' total and their mean; the lookups of each trial's state by its id are most of it at
// 16,384 trials.
//   build/tests/bench/bench_report_path [TRIALS [STEPS]]   (default 16384 100)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/study/allocation_clock.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/study_controller.hpp"
#include "core/study/suggester_factory.hpp"

namespace {

using namespace slurmtune::core;

struct Quiet final : StudyObserver {};

std::size_t arg(int argc, char** argv, int i, std::size_t fallback) {
  return argc > i ? static_cast<std::size_t>(std::strtoull(argv[i], nullptr, 10)) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t trials = arg(argc, argv, 1, 16384), steps = arg(argc, argv, 2, 100);
  StudySpec spec;
  spec.name = "bench";
  spec.metric = "loss";
  spec.metrics = {"loss"};
  spec.seed = 1;
  spec.max_trials = trials;
  spec.space = SearchSpace({Parameter{"x", Domain{DomainKind::Uniform, 0, 1, 0, {}}}});
  spec.scheduler.type = SchedulerType::Fifo;
  spec.scheduler.max_t = static_cast<double>(steps);
  Quiet observer;
  StudyController controller(spec, make_scheduler(spec.scheduler, spec.mode, spec.seed, spec.name),
                             make_suggester(spec.space, spec.sampler, false, spec.seed), observer);
  AllocationClock clock(spec.scheduler.max_t);
  std::vector<TrialId> running;
  while (const auto launch = controller.next_launch(0)) {
    running.push_back(launch->trial);
    clock.attempt_started(launch->trial, 0, 0);
  }
  std::vector<double> metrics(1);
  std::minstd_rand shuffler(7);
  double took = 0;
  for (std::size_t step = 1; step < steps; ++step) {
    std::shuffle(running.begin(), running.end(), shuffler);
    const auto start = std::chrono::steady_clock::now();
    for (const TrialId trial : running) {
      metrics[0] = 1.0 / static_cast<double>(step) + 1e-6 * static_cast<double>(trial);
      controller.stamp(static_cast<double>(step));
      const auto verdict = controller.report(trial, static_cast<double>(step), metrics);
      clock.reported(trial, static_cast<double>(step), static_cast<double>(step),
                     verdict.outcome.milestone);
    }
    took += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const auto reports = static_cast<double>(running.size() * (steps - 1));
  std::printf("%zu trials running, %.0f reports: %.3f s, %.3f us a report\n", running.size(),
              reports, took, 1e6 * took / reports);
}
