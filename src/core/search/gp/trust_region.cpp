#include "core/search/gp/trust_region.hpp"

#include <algorithm>
#include <cmath>

#include "core/search/gp/unit_draws.hpp"

namespace slurmtune::core::gp {
namespace {

constexpr std::size_t kMaskedFrom = 20;  // TuRBO perturbs every input of at most 20

// A value of `d` drawn uniformly within `half` of `centre` in unit coordinates, clipped to
// the range.
ParamValue draw_near(const Domain& d, const ParamValue& centre, double half, Xoshiro256& rng) {
  const double c = d.to_unit(centre);
  const double low = std::max(0.0, c - half), high = std::min(1.0, c + half);
  return value_at(d, low + (high - low) * rng.uniform01());
}

}  // namespace

TrustRegion::TrustRegion(std::size_t parameters)
    : failure_run_(std::max(kMinFailureRun, parameters)) {}

void TrustRegion::observed(double resource, double score, bool counted) {
  const auto best = best_.find(resource);
  const bool finite = std::isfinite(score);
  // The first observation at a resource has nothing to beat: it only sets the best.
  if (counted && best != best_.end()) {
    if (finite && score > best->second + kSuccessMargin * std::fabs(best->second)) {
      ++successes_;
      failures_ = 0;
    } else {
      ++failures_;
      successes_ = 0;
    }
    if (successes_ == kSuccessRun) {
      side_ = std::min(2 * side_, kMaxSide);
      successes_ = 0;
    } else if (failures_ == failure_run_) {
      side_ /= 2;
      failures_ = 0;
    }
    if (side_ < kMinSide) side_ = kInitialSide;
  }
  if (!finite) return;
  if (best == best_.end())
    best_.emplace(resource, score);
  else
    best->second = std::max(best->second, score);
}

std::vector<double> box_weights(const SearchSpace& space, std::span<const double> length_scales,
                                std::span<const std::size_t> number_inputs) {
  const auto& params = space.parameters();
  std::vector<double> weights(params.size(), 1.0);
  if (length_scales.empty() || number_inputs.empty()) return weights;
  double log_mean = 0;
  for (const auto input : number_inputs)
    log_mean += std::log(length_scales[input]);
  log_mean /= static_cast<double>(number_inputs.size());
  std::size_t k = 0;
  for (std::size_t j = 0; j < params.size(); ++j) {
    const Domain& d = params[j].domain;
    if (d.kind != DomainKind::Choice && d.kind != DomainKind::Constant)
      weights[j] = std::exp(std::log(length_scales[number_inputs[k++]]) - log_mean);
  }
  return weights;
}

bool any_short(std::span<const double> weights) {
  return std::any_of(weights.begin(), weights.end(), [](double w) { return w < kShortWeight; });
}

Configuration draw_along_short(const SearchSpace& space, const Configuration& centre,
                               std::span<const double> weights, double side, Xoshiro256& rng) {
  const auto& params = space.parameters();
  Configuration config = centre;
  for (std::size_t j = 0; j < params.size(); ++j) {
    const Domain& d = params[j].domain;
    if (!d.is_sampled()) continue;
    // Choices weigh 1, never short: only a number active in the centre is boxed.
    if (weights[j] < kShortWeight && config.is_active(j)) {
      config.values[j] = draw_near(d, config.values[j], side * weights[j] / 2, rng);
    } else {
      config.values[j] = value_at(d, rng.uniform01());
    }
  }
  space.resolve_activity(config);
  return config;
}

Configuration draw_in_box(const SearchSpace& space, const Configuration& centre,
                          std::span<const double> weights, double side, double choice_resample,
                          Xoshiro256& rng) {
  const auto& params = space.parameters();
  std::vector<std::size_t> sampled;
  for (std::size_t j = 0; j < params.size(); ++j)
    if (params[j].domain.is_sampled()) sampled.push_back(j);
  std::vector<bool> moves(params.size(), true);
  if (sampled.size() > kMaskedFrom) {
    const double chance = static_cast<double>(kMaskedFrom) / static_cast<double>(sampled.size());
    bool any = false;
    for (const auto j : sampled)
      any |= (moves[j] = rng.uniform01() < chance);
    if (!any) {
      const auto pick =
          std::min(static_cast<std::size_t>(rng.uniform01() * sampled.size()), sampled.size() - 1);
      moves[sampled[pick]] = true;
    }
  }
  Configuration config = centre;
  for (const auto j : sampled) {
    const Domain& d = params[j].domain;
    if (!config.is_active(j)) {
      // Absent in the centre: nothing to move, a value of its own in case a moved choice
      // brings it into existence.
      config.values[j] = value_at(d, rng.uniform01());
    } else if (!moves[j]) {
      continue;
    } else if (d.kind == DomainKind::Choice) {
      if (rng.uniform01() < choice_resample) config.values[j] = value_at(d, rng.uniform01());
    } else {
      config.values[j] = draw_near(d, config.values[j], side * weights[j] / 2, rng);
    }
  }
  space.resolve_activity(config);
  return config;
}

}  // namespace slurmtune::core::gp
