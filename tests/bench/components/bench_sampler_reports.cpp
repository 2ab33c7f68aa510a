// What a long study's reports cost MOBSTER (the recommended setting's sampler) on the
// coordinator's loop: TRIALS trials that report every step for STEPS steps, each report
// through began_at/reported_at/reported as the study controller calls them, rungs at
// 1, 3, 9, 27, ... (ASHA's with eta 3). Prints the calls' total and their worst single
// call, and the bytes of the suggester's decision snapshot at the end (what the results
// file keeps every --snapshot-interval and a resume reads back).
//   build/tests/bench/bench_sampler_reports [TRIALS [STEPS]]   (default 16384 300)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "core/search/gp/mobster_suggester.hpp"
#include "core/state_archive_io.hpp"

namespace {

using namespace slurmtune::core;
using Clock = std::chrono::steady_clock;

SearchSpace three_parameters() {
  return SearchSpace({
      {"lr", Domain{DomainKind::LogUniform, 1e-5, 1e-1, 0, {}}},
      {"dropout", Domain{DomainKind::Uniform, 0, 0.5, 0, {}}},
      {"layers", Domain{DomainKind::RandInt, 1, 9, 0, {}}},
  });
}

std::size_t arg(int argc, char** argv, int i, std::size_t fallback) {
  return argc > i ? static_cast<std::size_t>(std::strtoull(argv[i], nullptr, 10)) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t trials = arg(argc, argv, 1, 16384), steps = arg(argc, argv, 2, 300);
  const auto space = three_parameters();
  MobsterOptions options;
  options.max_resource = static_cast<double>(steps);
  options.rung_weighting = RungWeighting::HyperTune;
  MobsterSuggester s(space, options, false, 1);
  Xoshiro256 rng(7);
  for (TrialId t = 0; t < trials; ++t) {
    Configuration c;
    for (const auto& p : space.parameters())
      c.values.push_back(p.domain.from_unit(rng.uniform01()));
    s.started(t, c);
    s.began_at(t, 0, 0.0);
  }
  double total_s = 0, worst_s = 0;
  std::size_t worst_at = 0, calls = 0;
  for (std::size_t step = 1; step <= steps; ++step) {
    const bool rung = [&] {
      std::size_t r = 1;
      while (r < step)
        r *= 3;
      return r == step;
    }();
    for (TrialId t = 0; t < trials; ++t) {
      ReportOutcome outcome;
      if (rung) outcome.milestone = static_cast<double>(step);
      const double value = rng.uniform01() + 1.0 / static_cast<double>(step);
      const auto start = Clock::now();
      s.reported_at(t, static_cast<double>(step), static_cast<double>(step));
      s.reported(t, static_cast<double>(step), value, outcome);
      const double took = std::chrono::duration<double>(Clock::now() - start).count();
      total_s += took;
      if (took > worst_s) {
        worst_s = took;
        worst_at = calls;
      }
      ++calls;
    }
  }
  std::ostringstream snapshot;
  {
    StateOut archive(snapshot);
    s.save_state(archive);
  }
  std::printf(
      "%zu trials x %zu steps: %zu reports, %.3f s in all (%.2f us a report); "
      "worst report %.2f ms (report %zu); decision snapshot %zu bytes\n",
      trials, steps, calls, total_s, 1e6 * total_s / static_cast<double>(calls), 1e3 * worst_s,
      worst_at, snapshot.str().size());
}
