#include "core/search/gp/prior_region.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

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

// The good trials' indices into `past`, best first.
std::vector<std::size_t> good_trials(const std::vector<PastTrial>& past, bool maximize) {
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
  std::vector<std::size_t> good;
  for (const auto& s : ranked)
    good.push_back(s.index);
  return good;
}

// A judged value as a score, larger better; a diverged one (NaN) ranks below every number,
// as the scheduler's rungs rank it.
double judged_score(double value, bool maximize) {
  if (std::isnan(value)) return -std::numeric_limits<double>::infinity();
  return maximize ? value : -value;
}

// Each good trial's share of the other earlier trials judged at each of its rungs that beat
// it there: every earlier trial's first judgement at each resource, sorted once.
std::vector<std::vector<RungLesson>> rung_lessons(const std::vector<PastTrial>& past,
                                                  const std::vector<std::size_t>& good,
                                                  bool maximize) {
  std::map<double, std::vector<double>> scores_at;  // resource -> its judged scores, sorted
  for (const auto& t : past) {
    std::set<double> seen;
    for (const auto& j : t.judged)
      if (seen.insert(j.milestone).second)
        scores_at[j.milestone].push_back(judged_score(j.value, maximize));
  }
  for (auto& [milestone, scores] : scores_at)
    std::sort(scores.begin(), scores.end());
  std::vector<std::vector<RungLesson>> lessons;
  for (const std::size_t g : good) {
    std::vector<RungLesson> rungs;
    std::set<double> seen;
    for (const auto& j : past[g].judged) {
      if (!std::isfinite(j.value) || !seen.insert(j.milestone).second) continue;
      const auto& scores = scores_at.at(j.milestone);
      if (scores.size() < 2) continue;  // no other trial was judged there
      const double own = judged_score(j.value, maximize);
      const auto above =
          static_cast<double>(scores.end() - std::upper_bound(scores.begin(), scores.end(), own));
      rungs.push_back({j.milestone, above / static_cast<double>(scores.size() - 1)});
    }
    std::sort(rungs.begin(), rungs.end(),
              [](const RungLesson& a, const RungLesson& b) { return a.milestone < b.milestone; });
    lessons.push_back(std::move(rungs));
  }
  return lessons;
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
    : space_(&space) {
  const auto good = good_trials(past, maximize);
  for (const std::size_t g : good)
    good_.push_back(past[g].config);
  lessons_ = rung_lessons(past, good, maximize);
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
