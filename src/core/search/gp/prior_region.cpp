#include "core/search/gp/prior_region.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.hpp"
#include "core/search/gp/unit_draws.hpp"

namespace slurmtune::core::gp {
namespace {

// Where a trial stands in successive halving's order: the highest resource it was judged
// at (or completed), and its value there as a score (larger is better).
struct Standing {
  double resource = 0, score = 0;
  std::size_t index = 0;  // in the earlier trials' order: ties keep it
};

std::optional<Standing> standing_of(const PastTrial& t, bool maximize, std::size_t index) {
  std::optional<Standing> best;
  const auto consider = [&](double resource, double value) {
    if (!std::isfinite(value)) return;
    const double score = maximize ? value : -value;
    if (!best || resource > best->resource || (resource == best->resource && score > best->score))
      best = Standing{resource, score, index};
  };
  for (const auto& j : t.judged)
    consider(j.milestone, j.value);
  if (t.end == TrialEnd::Completed && t.last) consider(t.last->first, t.last->second);
  return best;
}

std::vector<Configuration> good_configurations(const std::vector<PastTrial>& past, bool maximize) {
  std::vector<Standing> ranked;
  for (std::size_t i = 0; i < past.size(); ++i)
    if (const auto s = standing_of(past[i], maximize, i)) ranked.push_back(*s);
  if (ranked.empty())
    throw InputError("[sampler] prior: no earlier trial has a finite value to rank it by");
  std::stable_sort(ranked.begin(), ranked.end(), [](const Standing& a, const Standing& b) {
    return a.resource != b.resource ? a.resource > b.resource : a.score > b.score;
  });
  const auto top = static_cast<std::size_t>(
      std::ceil(PriorRegion::kTopShare * static_cast<double>(ranked.size())));
  ranked.resize(std::min(ranked.size(), std::max(PriorRegion::kMinGood, top)));
  std::vector<Configuration> good;
  for (const auto& s : ranked)
    good.push_back(past[s.index].config);
  return good;
}

// Scott's rule in one dimension of the good set's unit coordinates (its active values):
// sd * n^(-1/5), within the bounds; the widest where fewer than two values exist.
double bandwidth(const Domain& d, std::size_t p, const std::vector<Configuration>& good) {
  std::vector<double> unit;
  for (const auto& c : good)
    if (c.is_active(p)) unit.push_back(d.to_unit(c.values[p]));
  if (unit.size() < 2) return PriorRegion::kMaxBandwidth;
  double mean = 0;
  for (const double u : unit)
    mean += u / static_cast<double>(unit.size());
  double variance = 0;
  for (const double u : unit)
    variance += (u - mean) * (u - mean) / static_cast<double>(unit.size() - 1);
  const double scott = std::sqrt(variance) * std::pow(static_cast<double>(unit.size()), -0.2);
  return std::clamp(scott, PriorRegion::kMinBandwidth, PriorRegion::kMaxBandwidth);
}

}  // namespace

PriorRegion::PriorRegion(const SearchSpace& space, const std::vector<PastTrial>& past,
                         bool maximize)
    : space_(&space), good_(good_configurations(past, maximize)) {
  const auto& params = space.parameters();
  bandwidths_.assign(params.size(), 0.0);
  for (std::size_t p = 0; p < params.size(); ++p) {
    const Domain& d = params[p].domain;
    if (d.is_sampled() && d.kind != DomainKind::Choice) bandwidths_[p] = bandwidth(d, p, good_);
  }
}

Configuration PriorRegion::sample(Xoshiro256& rng) const {
  const auto k = static_cast<std::size_t>(rng.uniform01() * static_cast<double>(good_.size()));
  Configuration config = good_[std::min(k, good_.size() - 1)];
  const auto& params = space_->parameters();
  for (std::size_t p = 0; p < params.size(); ++p) {
    const Domain& d = params[p].domain;
    if (!d.is_sampled()) continue;
    if (!config.is_active(p)) {
      // Absent in the centre: a value of its own, in case a redrawn choice brings it in.
      config.values[p] = value_at(d, rng.uniform01());
    } else if (d.kind == DomainKind::Choice) {
      if (rng.uniform01() < kChoiceRedraw) config.values[p] = value_at(d, rng.uniform01());
    } else {
      config.values[p] = value_at(
          d, folded_into_unit(d.to_unit(config.values[p]) + bandwidths_[p] * standard_normal(rng)));
    }
  }
  space_->resolve_activity(config);
  return config;
}

}  // namespace slurmtune::core::gp
