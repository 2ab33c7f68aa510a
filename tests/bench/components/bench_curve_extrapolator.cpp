// Cost of one learning-curve prediction (issue #26: a predictor must cost far less than
// a training step) for curves of 9 to 243 reports, forecasting three times as far.
//   build/tests/bench/bench_curve_extrapolator
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "core/prediction/curve_extrapolator.hpp"

namespace {

void predict_curve(benchmark::State& state) {
  const auto reports = static_cast<int>(state.range(0));
  std::vector<slurmtune::core::ReportedPoint> curve;
  for (int s = 1; s <= reports; ++s)  // a power law with a deterministic wobble as noise
    curve.push_back(
        {static_cast<double>(s), 0.2 + 0.8 * std::pow(s, -0.7) + 0.01 * std::sin(7.1 * s)});
  const slurmtune::core::CurveExtrapolator extrapolate;
  for (auto _ : state)
    benchmark::DoNotOptimize(extrapolate.predict(curve, 3.0 * reports));
}

}  // namespace

BENCHMARK(predict_curve)->Arg(9)->Arg(27)->Arg(81)->Arg(243)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
