// Cost of one MOBSTER suggestion (issue #26: decision cost <= 10 ms with 1,000
// observations and <= 50 ms with 10,000) and of one hyperparameter refit.
//   build/tests/bench/bench_mobster
// A 6-parameter space (4 numbers, one integer, a 3-way choice: 9 model inputs + the
// resource); observations as ASHA makes them (every trial at rung 1, a third at 3, a
// ninth at 9), 8 trials pending. `suggest` is timed with the refit of its ladder point
// already made (most suggestions), with MOBSTER's first-rung acquisition and with
// Hyper-Tune's rung weighting (each suggestion scoring its own candidates, and in a
// launch wave, MobsterOptions::wave, and with an earlier study's rows in the model,
// `[sampler] prior_model`); `refit` is the fit a suggestion pays when the observations
// cross the next ladder point.
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "core/random.hpp"
#include "core/search/gp/mobster_suggester.hpp"

namespace {

using namespace slurmtune::core;

SearchSpace six_parameters() {
  const auto ranged = [](DomainKind kind, double low, double high) {
    return Domain{kind, low, high, 0, {}};
  };
  return SearchSpace({
      {"lr", ranged(DomainKind::LogUniform, 1e-5, 1e-1)},
      {"wd", ranged(DomainKind::LogUniform, 1e-6, 1e-2)},
      {"dropout", ranged(DomainKind::Uniform, 0, 0.5)},
      {"momentum", ranged(DomainKind::Uniform, 0.8, 0.99)},
      {"layers", ranged(DomainKind::RandInt, 1, 9)},
      {"opt", Domain{DomainKind::Choice,
                     0,
                     0,
                     0,
                     {ParamValue{"sgd"}, ParamValue{"adam"}, ParamValue{"rms"}}}},
  });
}

double loss(const SearchSpace& space, const Configuration& c, double resource) {
  double x = 0;
  for (std::size_t p = 0; p + 1 < space.size(); ++p)
    x += std::pow(space.parameters()[p].domain.to_unit(c.values[p]) - 0.3, 2);
  return x + 1.0 / resource;
}

ReportOutcome at_rung(double milestone) {
  ReportOutcome o;
  o.rung = 0;
  o.milestone = milestone;
  return o;
}

// A suggester that has seen `observations` judged reports and has `pending` trials
// started and not yet judged; returns the next trial id.
TrialId fill(MobsterSuggester& s, const SearchSpace& space, std::size_t observations,
             std::size_t pending = 8) {
  Xoshiro256 rng(7);
  std::size_t seen = 0;
  TrialId t = 0;
  for (; seen < observations; ++t) {
    Configuration c;
    for (const auto& p : space.parameters())
      c.values.push_back(p.domain.from_unit(rng.uniform01()));
    s.started(t, c);
    for (const double r : {1.0, 3.0, 9.0}) {
      if (seen == observations || (r == 3 && t % 3) || (r == 9 && t % 9)) break;
      s.reported(t, r, loss(space, c, r), at_rung(r));
      ++seen;
    }
    s.ended(t, TrialEnd::Stopped);
  }
  // The pending trials start from random configurations: suggesting each would cost
  // what the bench measures, thousands of times over.
  for (std::size_t k = 0; k < pending; ++k, ++t) {
    Configuration c;
    for (const auto& p : space.parameters())
      c.values.push_back(p.domain.from_unit(rng.uniform01()));
    s.started(t, c);
  }
  return t;
}

// `count` trials of an earlier study of the same space (`[sampler] prior`), judged as
// fill() judges this study's, on a loss shifted by 1 (another size of the task).
std::vector<PastTrial> earlier_study(const SearchSpace& space, std::size_t count) {
  Xoshiro256 rng(11);
  std::vector<PastTrial> past(count);
  for (std::size_t t = 0; t < count; ++t) {
    for (const auto& p : space.parameters())
      past[t].config.values.push_back(p.domain.from_unit(rng.uniform01()));
    for (const double r : {1.0, 3.0, 9.0}) {
      if ((r == 3 && t % 3) || (r == 9 && t % 9)) break;
      past[t].judged.push_back({r, loss(space, past[t].config, r) + 1, r});
    }
    past[t].end = TrialEnd::Stopped;
  }
  return past;
}

// `wave`: MobsterOptions::wave (0: every suggestion scores candidates of its own);
// `prior`: an earlier study's trials, with prior_model.
void suggest_with(benchmark::State& state, RungWeighting weighting, std::size_t wave = 0,
                  const std::vector<PastTrial>& prior = {}) {
  const auto space = six_parameters();
  MobsterOptions options;
  options.max_resource = 27;
  options.rung_weighting = weighting;
  options.wave = wave;
  options.prior_model = !prior.empty();
  MobsterSuggester s(space, options, false, 1, prior);
  TrialId t = fill(s, space, static_cast<std::size_t>(state.range(0)),
                   static_cast<std::size_t>(state.range(1)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(s.suggest(t));
    s.ended(t++, TrialEnd::Failed);  // keeps the pending trials where they were
  }
}

void suggest(benchmark::State& state) {
  suggest_with(state, RungWeighting::FirstRung);
}

// rung_weighting = "hyper-tune": three rungs weighted, so three predictions per candidate,
// plus the reference rung's leave-one-out means.
void suggest_hyper_tune(benchmark::State& state) {
  suggest_with(state, RungWeighting::HyperTune);
}

// The same in a launch wave (the default `wave`, 64): past max_pending pending trials,
// each block of 64 trials shares one scoring; the time is a suggestion's average over
// the blocks the benchmark runs through.
void suggest_hyper_tune_wave(benchmark::State& state) {
  suggest_with(state, RungWeighting::HyperTune, MobsterOptions{}.wave);
}

// The same with `[sampler] prior` and prior_model: an earlier study of 10,000 trials (about
// 15,000 judged rungs), of which the model takes max_fit_observations rows.
void suggest_hyper_tune_prior_model(benchmark::State& state) {
  static const auto past = earlier_study(six_parameters(), 10000);
  suggest_with(state, RungWeighting::HyperTune, 0, past);
}

// What reading the earlier studies into the model costs, once, when the suggester is made.
void prior_model_rows(benchmark::State& state) {
  const auto space = six_parameters();
  const auto past = earlier_study(space, static_cast<std::size_t>(state.range(0)));
  MobsterOptions options;
  options.max_resource = 27;
  options.prior_model = true;
  for (auto _ : state)
    benchmark::DoNotOptimize(MobsterSuggester(space, options, false, 1, past));
}

void refit(benchmark::State& state) {
  const auto space = six_parameters();
  MobsterOptions options;
  options.max_resource = 27;
  MobsterSuggester s(space, options, false, 1);
  fill(s, space, static_cast<std::size_t>(state.range(0)));
  const gp::Data data = s.model()->data();
  gp::Data fit_data{data.dims, {}, {}};  // the first max_fit_observations rows
  for (std::size_t i = 0; i < options.max_fit_observations && i < data.size(); ++i) {
    const auto row = data.row(i);
    fit_data.inputs.insert(fit_data.inputs.end(), row.begin(), row.end());
    fit_data.targets.push_back(data.targets[i]);
  }
  for (auto _ : state)
    benchmark::DoNotOptimize(
        gp::fit(fit_data, gp::default_hyperparameters(data.dims),
                {options.fit_iterations, gp::LengthScalePrior::Fixed, {}, {}}));
}

}  // namespace

// Observations 100 to 100,000 crossed with pending trials 8 to 16,384 (issue #62: the
// recommended setting at most 20 ms a suggestion with 16,384 running, 100,000 observed).
static void observations_by_pending(benchmark::internal::Benchmark* b) {
  for (const long observations : {100L, 1000L, 10000L, 100000L})
    for (const long pending : {8L, 64L, 512L, 4096L, 16384L})
      b->Args({observations, pending});
  b->ArgNames({"observations", "pending"});
}

BENCHMARK(suggest)->Apply(observations_by_pending)->Unit(benchmark::kMillisecond);
BENCHMARK(suggest_hyper_tune)->Apply(observations_by_pending)->Unit(benchmark::kMillisecond);
BENCHMARK(suggest_hyper_tune_wave)
    ->ArgsProduct({{1000, 100000}, {512, 16384}})
    ->ArgNames({"observations", "pending"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(suggest_hyper_tune_prior_model)
    ->ArgsProduct({{1000, 100000}, {8, 512}})
    ->ArgNames({"observations", "pending"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(prior_model_rows)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(refit)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
