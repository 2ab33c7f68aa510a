#include "core/search/optuna/nsga2_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"

namespace slurmtune::core::nsga2 {
namespace {

using tpe::Distribution;

bool is_complete(const Individual& t) {
  return t.state == Individual::State::Complete;
}

// _SearchSpaceTransform (transform_log, transform_step) for a numeric parameter.
double transformed(const Distribution& d, double value) {
  return d.log ? std::log(value) : value;
}

double untransformed(const Distribution& d, double x) {
  const double step = d.step.value_or(1.0);
  if (d.kind == Distribution::Kind::Float) {
    if (d.log) {
      const double v = std::exp(x);
      return d.low == d.high ? v : std::min(v, tpe::below_max(d.high));
    }
    if (d.step) return std::clamp(std::nearbyint((x - d.low) / step) * step + d.low, d.low, d.high);
    return d.low == d.high ? x : std::min(x, tpe::below_max(d.high));
  }
  if (d.log) return std::clamp(std::nearbyint(std::exp(x)), d.low, d.high);
  return std::clamp(std::nearbyint((x - d.low) / step) * step + d.low, d.low, d.high);
}

// distribution._contains(value).
bool contains(const Distribution& d, double v) {
  if (d.kind == Distribution::Kind::Categorical)
    return v >= 0 && v < static_cast<double>(d.choices);
  if (!(d.low <= v && v <= d.high)) return false;
  if (d.kind == Distribution::Kind::Int) return std::fmod(v - d.low, d.step.value_or(1.0)) == 0;
  if (!d.step) return true;
  const double k = (v - d.low) / *d.step;
  return std::abs(k - std::nearbyint(k)) < 1.0e-8;
}

}  // namespace

Nsga2Sampler::Nsga2Sampler(std::vector<Distribution> space, Nsga2Options options,
                           std::uint32_t seed, bool constrained,
                           std::vector<std::vector<tpe::Condition>> when)
    : space_(std::move(space)),
      options_(options),
      constrained_(constrained),
      when_(std::move(when)),
      seed_(seed),
      rng_(seed),
      random_rng_(seed) {
  if (options_.population_size < 2) throw UsageError("nsga2: population_size must be at least 2");
}

void Nsga2Sampler::restore(std::uint64_t model_words, std::uint64_t startup_words) {
  rng_ = NumpyRandomState(seed_);
  rng_.discard(model_words);
  random_rng_ = NumpyRandomState(seed_);
  random_rng_.discard(startup_words);
}

bool Nsga2Sampler::dominates(const std::vector<Individual>& history, std::size_t a,
                             std::size_t b) const {
  return constrained_ ? constrained_dominates(history[a].point, history[b].point)
                      : core::dominates(history[a].point.loss, history[b].point.loss);
}

std::vector<std::size_t> Nsga2Sampler::elite(const std::vector<Individual>& history,
                                             std::vector<std::size_t> population) const {
  const auto fronts = nondominated_fronts(std::move(population), [&](std::size_t a, std::size_t b) {
    return dominates(history, a, b);
  });
  std::vector<std::size_t> out;
  for (auto front : fronts) {
    if (out.size() + front.size() < options_.population_size) {
      out.insert(out.end(), front.begin(), front.end());
      continue;
    }
    // The front that fills the population: its least crowded members first.
    std::vector<std::vector<double>> values(history.size());
    for (const auto m : front)
      values[m] = history[m].values;
    crowding_distance_sort(front, values);
    const std::size_t n = options_.population_size - out.size();
    out.insert(out.end(), front.begin(), front.begin() + static_cast<std::ptrdiff_t>(n));
    break;
  }
  return out;
}

Nsga2Sampler::Parents Nsga2Sampler::parent_population(
    const std::vector<Individual>& history) const {
  std::map<std::size_t, std::vector<std::size_t>> by_generation;  // completed trials only
  for (std::size_t i = 0; i < history.size(); ++i)
    if (is_complete(history[i]) && history[i].generation)
      by_generation[*history[i].generation].push_back(i);
  Parents parents;
  for (;;) {
    const std::size_t generation = parents.generation ? *parents.generation + 1 : 0;
    std::vector<std::size_t> population = by_generation[generation];
    if (population.size() < options_.population_size) break;
    population.insert(population.end(), parents.population.begin(), parents.population.end());
    parents.population = elite(history, std::move(population));
    parents.generation = generation;
  }
  return parents;
}

std::size_t Nsga2Sampler::next_generation(const std::vector<Individual>& history) const {
  const auto generation = parent_population(history).generation;
  return generation ? *generation + 1 : 0;
}

std::vector<std::size_t> Nsga2Sampler::relative_space(
    const std::vector<Individual>& history) const {
  // IntersectionSearchSpace over completed trials, without single-valued parameters.
  std::vector<bool> in_all(space_.size(), true);
  bool any = false;
  for (const auto& t : history) {
    if (!is_complete(t)) continue;
    any = true;
    for (std::size_t p = 0; p < space_.size(); ++p)
      if (p >= t.params.size() || !t.params[p]) in_all[p] = false;
  }
  std::vector<std::size_t> out;
  for (std::size_t p = 0; any && p < space_.size(); ++p)
    if (in_all[p] && !tpe::is_single(space_[p])) out.push_back(p);
  return out;
}

std::size_t Nsga2Sampler::tournament(const std::vector<Individual>& history,
                                     const std::vector<std::size_t>& candidates) {
  const auto n = static_cast<std::int64_t>(candidates.size());
  const std::size_t first = candidates[static_cast<std::size_t>(rng_.randint(0, n))];
  const std::size_t second = candidates[static_cast<std::size_t>(rng_.randint(0, n))];
  return dominates(history, first, second) ? first : second;
}

std::optional<std::vector<std::pair<std::size_t, double>>> Nsga2Sampler::crossover(
    const std::vector<Individual>& history, const std::vector<std::size_t>& space,
    std::size_t first, std::size_t second) {
  std::vector<std::size_t> categorical, numerical;
  for (const auto p : space)
    (space_[p].kind == Distribution::Kind::Categorical ? categorical : numerical).push_back(p);
  std::vector<std::pair<std::size_t, double>> child;
  // Optuna draws every mask of a kind before choosing: rand(n) >= swapping_prob.
  const auto masks = [this](std::size_t n) {
    std::vector<bool> from_second(n);
    for (std::size_t k = 0; k < n; ++k)
      from_second[k] = rng_.random_sample() >= options_.swapping_prob;
    return from_second;
  };
  const auto parent_value = [&](std::size_t parent, std::size_t p) {
    return *history[parent].params[p];
  };
  const auto categorical_masks = masks(categorical.size());
  for (std::size_t k = 0; k < categorical.size(); ++k)
    child.emplace_back(categorical[k],
                       parent_value(categorical_masks[k] ? second : first, categorical[k]));
  const auto numerical_masks = masks(numerical.size());
  for (std::size_t k = 0; k < numerical.size(); ++k) {
    const Distribution& d = space_[numerical[k]];
    const double x =
        transformed(d, parent_value(numerical_masks[k] ? second : first, numerical[k]));
    child.emplace_back(numerical[k], untransformed(d, x));
  }
  for (const auto& [p, v] : child)
    if (!contains(space_[p], v)) return std::nullopt;
  return child;
}

std::vector<std::optional<double>> Nsga2Sampler::breed(const std::vector<Individual>& history,
                                                       const std::vector<std::size_t>& parents) {
  const std::vector<std::size_t> space = relative_space(history);
  std::vector<std::pair<std::size_t, double>> child;
  if (rng_.random_sample() < options_.crossover_prob) {
    for (;;) {  // again while a value falls outside its domain
      const std::size_t first = tournament(history, parents);
      std::vector<std::size_t> others;
      for (const auto p : parents)
        if (p != first) others.push_back(p);
      const std::size_t second = tournament(history, others);
      if (auto bred = crossover(history, space, first, second)) {
        child = std::move(*bred);
        break;
      }
    }
  } else {
    const auto n = static_cast<std::int64_t>(parents.size());
    const std::size_t parent = parents[static_cast<std::size_t>(rng_.randint(0, n))];
    for (const auto p : space)
      child.emplace_back(p, *history[parent].params[p]);
  }
  const double mutation_prob =
      options_.mutation_prob.value_or(1.0 / std::max(1.0, static_cast<double>(child.size())));
  std::vector<std::optional<double>> inherited(space_.size());
  for (const auto& [p, v] : child)
    if (rng_.random_sample() >= mutation_prob) inherited[p] = v;
  return inherited;
}

std::vector<double> Nsga2Sampler::suggest(std::vector<Individual>& history,
                                          const std::vector<std::optional<double>>& fixed) {
  const auto given = [&fixed](std::size_t p) {
    return p < fixed.size() ? fixed[p] : std::optional<double>();
  };
  const Parents parents = parent_population(history);
  auto& trial = history.back();
  trial.params.clear();
  trial.generation = parents.generation ? *parents.generation + 1 : 0;
  last_was_bred_ = parents.generation.has_value();
  const std::vector<std::optional<double>> inherited =
      parents.generation ? breed(history, parents.population)
                         : std::vector<std::optional<double>>(space_.size());
  std::vector<double> values;
  for (std::size_t p = 0; p < space_.size(); ++p) {
    if (p < when_.size() && !tpe::conditions_hold(when_[p], values)) {
      values.push_back(std::nan(""));  // not suggested in this trial
      trial.params.emplace_back();
      continue;
    }
    if (given(p))
      values.push_back(*given(p));
    else if (tpe::is_single(space_[p]))
      values.push_back(tpe::single_value(space_[p]));
    else if (inherited[p])
      values.push_back(*inherited[p]);
    else  // first generation, mutated, or not in every completed trial
      values.push_back(tpe::sample_random(space_[p], random_rng_));
    trial.params.emplace_back(values.back());
  }
  return values;
}

}  // namespace slurmtune::core::nsga2
