// Cost of one TPE suggestion against the size of the history, and of one BOHB draw from
// a model fitted on N observations at one budget.
//   build/tests/bench/bench_tpe [N ...]        (default 100 1000 10000)
// The history: N completed trials over lr (log float), width (int), dropout (float) and
// optimizer (4 choices), with random values; one new trial's four parameters are
// suggested as Optuna's ask() would, repeated, median reported. tests/bench/components/bench_tpe.py
// times Optuna 3.1's TPESampler on the same space and history sizes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "core/search/bohb/bohb_sampler.hpp"
#include "core/search/optuna/tpe_sampler.hpp"

using namespace slurmtune::core;

namespace {

// Median milliseconds of `repeats` calls of `f`.
template <class F>
double median_ms(int repeats, F&& f) {
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// BOHB on the same space: three unit coordinates and a 4-level choice, every draw from the
// model (random_fraction 0).
double bohb_ms(std::size_t n) {
  BohbOptions options;
  options.random_fraction = 0;
  bohb::BohbSampler sampler({{0}, {0}, {0}, {4}}, options, 1);
  Xoshiro256 rng(n);
  for (std::size_t i = 0; i < n; ++i)
    sampler.observe(9, {rng.uniform01(), rng.uniform01(), rng.uniform01(), double(rng.below(4))},
                    rng.uniform01());
  return median_ms(n >= 10000 ? 20 : 100, [&] { sampler.draw(); });
}

}  // namespace

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
  std::printf("%10s %14s %14s %14s %14s %14s\n", "history", "median_ms", "suggestions/s",
              "binned_ms", "default_ms", "bohb_ms");
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
    // semantics "optuna" (exact), "binned" with its default 128 slices, and the study
    // file's default "auto" (exact until 5,000 trials have finished, then binned).
    const auto time = [&](std::size_t bins, std::size_t binned_from = 0) {
      tpe::TpeOptions options;
      options.bins = bins;
      options.binned_from = binned_from;
      tpe::TpeSampler sampler(space, options, 1, false);
      return median_ms(n >= 10000 ? 20 : 100, [&] {
        history.push_back(tpe::TrialRecord{});
        sampler.suggest(history);
        history.pop_back();
      });
    };
    const double exact = time(0);
    std::printf("%10zu %14.3f %14.0f %14.3f %14.3f %14.3f\n", n, exact, 1000.0 / exact, time(128),
                time(128, tpe::TpeOptions::auto_binned_from), bohb_ms(n));
  }
}
