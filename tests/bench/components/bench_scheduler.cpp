// Cost of one scheduler decision with N trials already in the rung being judged.
//   build/tests/bench/bench_scheduler --benchmark_counters_tabular=true
// Each iteration reports a fresh trial at the first milestone: the rung grows by one per
// iteration, so the rung holds N to N + 500,000 values while it is timed.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "core/random.hpp"
#include "core/schedulers/early_stopping/asha_promotion_scheduler.hpp"
#include "core/schedulers/early_stopping/asha_scheduler.hpp"
#include "core/schedulers/early_stopping/median_stopping_scheduler.hpp"
#include "core/schedulers/early_stopping/optuna_pruners.hpp"
#include "core/schedulers/pbt/pbt_scheduler.hpp"

using namespace slurmtune::core;

namespace {

SchedulerSpec asha_spec() {
  SchedulerSpec s;
  s.type = SchedulerType::Asha;
  s.grace_period = 1;
  s.reduction_factor = 3;
  s.max_t = 81;
  return s;
}

constexpr TrialId kTimedReports = 500000;  // every benchmark below runs this many iterations

// Times report() alone: the trials that report inside the loop were added beforehand,
// so trial bookkeeping (add_trial) is not part of the figure.
template <class Make>
void decisions_at_rung_size(benchmark::State& state, Make make) {
  const auto n = static_cast<TrialId>(state.range(0));
  auto scheduler = make();
  Xoshiro256 rng(1);
  for (TrialId t = 0; t < n; ++t) {
    scheduler->add_trial(t, std::nullopt);
    scheduler->report(t, 1, rng.uniform01());
  }
  for (TrialId t = n; t < n + kTimedReports; ++t)
    scheduler->add_trial(t, std::nullopt);
  std::vector<double> values(kTimedReports);
  for (auto& v : values)
    v = rng.uniform01();
  TrialId next = n;
  for (auto _ : state) {
    benchmark::DoNotOptimize(scheduler->report(next, 1, values[next - n]));
    ++next;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AshaRayDecision(benchmark::State& state) {
  decisions_at_rung_size(state,
                         [] { return std::make_unique<AshaScheduler>(asha_spec(), Mode::Min, 1); });
}

void BM_AshaOptunaDecision(benchmark::State& state) {
  decisions_at_rung_size(state, [] {
    auto s = asha_spec();
    s.semantics = Semantics::Optuna;
    s.min_resource = 1;
    return std::make_unique<OptunaSuccessiveHalvingScheduler>(s, Mode::Min);
  });
}

void BM_MedianDecision(benchmark::State& state) {
  decisions_at_rung_size(state, [] {
    auto s = asha_spec();
    s.min_samples_required = 3;
    s.grace_period = 0;
    return std::make_unique<MedianStoppingScheduler>(s, Mode::Min);
  });
}

// ASHA promotion: a new trial starts, reports (and pauses), then a free worker asks for
// the next job: the full cost of one worker cycle, bookkeeping included.
void BM_AshaPromotionReportAndNextJob(benchmark::State& state) {
  const auto n = static_cast<TrialId>(state.range(0));
  auto spec = asha_spec();
  AshaPromotionScheduler s(spec, Mode::Min);
  Xoshiro256 rng(2);
  for (TrialId t = 0; t < n; ++t) {
    s.add_trial(t, std::nullopt);
    s.report(t, 1, rng.uniform01());
  }
  TrialId next = n;
  for (auto _ : state) {
    s.add_trial(next, std::nullopt);
    s.report(next, 1, rng.uniform01());
    benchmark::DoNotOptimize(s.next_job(true));
    ++next;
  }
  state.SetItemsProcessed(state.iterations());
}

// PBT: a population of N trials, each reporting at every step (perturbation_interval 1,
// so every report is a perturbation point: ranked, checkpointed or exploited), then the
// resumption of an exploited trial handed out: one decision with its bookkeeping. Ray
// Tune sorts the whole population at every such point.
void BM_PbtReportAndNextJob(benchmark::State& state) {
  const auto n = static_cast<TrialId>(state.range(0));
  SchedulerSpec spec;
  spec.type = SchedulerType::Pbt;
  spec.max_t = 1e18;
  spec.pbt.perturbation_interval = 1;
  spec.pbt.mutations = {
      PbtMutation{0, "lr", Domain{DomainKind::LogUniform, 1e-4, 1e-1, 0, {}}, {}}};
  PbtScheduler s(spec, Mode::Min, 1);
  const Configuration config{{ParamValue{0.01}}};
  for (TrialId t = 0; t < n; ++t) {
    s.add_trial(t, std::nullopt);
    s.trial_configured(t, config);
  }
  s.close_admissions();
  Xoshiro256 rng(4);
  std::vector<double> steps(n, 0.0);
  TrialId next = 0;
  const auto report_one = [&] {
    const TrialId t = next++ % n;
    benchmark::DoNotOptimize(s.report(t, steps[t] += 1, rng.uniform01()));
    while (auto job = s.next_job(false))
      benchmark::DoNotOptimize(job);
  };
  for (TrialId t = 0; t < n; ++t)  // every trial ranked once before timing
    report_one();
  for (auto _ : state)
    report_one();
  state.SetItemsProcessed(state.iterations());
}

// What Ray Tune and Optuna do per decision: a percentile over every value in the rung
// (numpy copies the rung and partitions it). Shown for comparison only.
void BM_RescanPercentileBaseline(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<double> rung(n);
  Xoshiro256 rng(3);
  for (auto& v : rung)
    v = rng.uniform01();
  for (auto _ : state) {
    std::vector<double> copy = rung;
    const auto k = copy.begin() + static_cast<std::ptrdiff_t>(2 * (n - 1) / 3);
    std::nth_element(copy.begin(), k, copy.end());
    benchmark::DoNotOptimize(*k);
    rung.push_back(rng.uniform01());
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(BM_AshaRayDecision)->Arg(1000)->Arg(100000)->Arg(1000000)->Iterations(kTimedReports);
BENCHMARK(BM_AshaOptunaDecision)->Arg(1000)->Arg(100000)->Arg(1000000)->Iterations(kTimedReports);
BENCHMARK(BM_MedianDecision)->Arg(1000)->Arg(100000)->Arg(1000000)->Iterations(kTimedReports);
BENCHMARK(BM_AshaPromotionReportAndNextJob)
    ->Arg(1000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Iterations(kTimedReports);
BENCHMARK(BM_PbtReportAndNextJob)->Arg(100)->Arg(10000)->Arg(1000000)->Iterations(kTimedReports);
BENCHMARK(BM_RescanPercentileBaseline)->Arg(1000)->Arg(100000)->Arg(1000000)->Iterations(200);

BENCHMARK_MAIN();
