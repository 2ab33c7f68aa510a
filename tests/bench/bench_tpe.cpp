// Cost of one TPE suggestion against the size of the history.
//   build/tests/bench/bench_tpe [N ...]        (default 100 1000 10000)
// The history: N completed trials over lr (log float), width (int), dropout (float) and
// optimizer (4 choices), with random values; one new trial's four parameters are
// suggested as Optuna's ask() would, repeated, median reported. tests/bench/bench_tpe.py
// times Optuna 3.1's TPESampler on the same space and history sizes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "core/search/tpe_sampler.hpp"

using namespace slurmtune::core;

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i)
    sizes.push_back(std::stoul(argv[i]));
  if (sizes.empty()) sizes = {100, 1000, 10000};
  using Kind = tpe::Distribution::Kind;
  const std::vector<tpe::Distribution> space{
      {Kind::Float, 1e-5, 1e-1, std::nullopt, true, 0},
      {Kind::Int, 16, 512, 1.0, false, 0},
      {Kind::Float, 0.0, 0.5, std::nullopt, false, 0},
      {Kind::Categorical, 0, 0, std::nullopt, false, 4},
  };
  std::printf("%10s %14s %14s\n", "history", "median_ms", "suggestions/s");
  for (const std::size_t n : sizes) {
    Xoshiro256 rng(n);
    std::vector<tpe::TrialRecord> history(n);
    for (auto& t : history) {
      t.state = tpe::TrialRecord::State::Complete;
      t.params = {std::exp(std::log(1e-5) + rng.uniform01() * std::log(1e4)),
                  std::floor(16 + rng.uniform01() * 497), 0.5 * rng.uniform01(),
                  static_cast<double>(rng.below(4))};
      t.value = rng.uniform01();
    }
    tpe::TpeSampler sampler(space, tpe::TpeOptions{}, 1, false);
    const int repeats = n >= 10000 ? 20 : 100;
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
      history.push_back(tpe::TrialRecord{});
      const auto start = std::chrono::steady_clock::now();
      sampler.suggest(history);
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      history.pop_back();
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    std::printf("%10zu %14.3f %14.0f\n", n, median, 1000.0 / median);
  }
}
