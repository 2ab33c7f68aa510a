#include "core/search/tpe_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace slurmtune::core::tpe {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Optuna ranks observations by (step key, signed value), lexicographically:
// completed (-inf, v), pruned (-step, v) or (-step, inf) for NaN, no report (1, 0),
// running (inf, inf).
struct Rank {
  double step_key, score;
  bool operator<(const Rank& o) const {
    return step_key != o.step_key ? step_key < o.step_key : score < o.score;
  }
};

double below_max(double high) {
  return std::nextafter(high, high - 1);
}

}  // namespace

std::size_t default_gamma(std::size_t n) {
  return std::min<std::size_t>(static_cast<std::size_t>(std::ceil(0.1 * static_cast<double>(n))),
                               25);
}

TpeSampler::TpeSampler(std::vector<Distribution> space, TpeOptions options, std::uint32_t seed,
                       bool maximize)
    : space_(std::move(space)),
      options_(options),
      maximize_(maximize),
      rng_(seed),
      random_rng_(seed) {}

double TpeSampler::suggest(std::size_t p, const std::vector<TrialRecord>& history) {
  std::size_t finished = 0;
  for (const auto& t : history)
    finished += t.state == TrialRecord::State::Complete || t.state == TrialRecord::State::Pruned;
  if (finished < options_.n_startup_trials) return sample_random(p);
  return sample_model(p, history, finished);
}

double TpeSampler::sample_random(std::size_t p) {
  // RandomSampler: one uniform draw per column of Optuna's search-space transform
  // (a categorical has one column per choice and takes the argmax), then back.
  const Distribution& d = space_[p];
  if (d.kind == Distribution::Kind::Categorical) {
    std::size_t best = 0;
    double best_value = -kInf;
    for (std::size_t c = 0; c < d.choices; ++c) {
      const double u = random_rng_.uniform(0, 1);
      if (u > best_value) {
        best_value = u;
        best = c;
      }
    }
    return static_cast<double>(best);
  }
  const double step = d.step.value_or(1.0);
  if (d.kind == Distribution::Kind::Float) {
    if (d.log) {
      const double x = random_rng_.uniform(std::log(d.low), std::log(d.high));
      return d.low == d.high ? std::exp(x) : std::min(std::exp(x), below_max(d.high));
    }
    if (d.step) {
      const double x = random_rng_.uniform(d.low - 0.5 * step, d.high + 0.5 * step);
      return std::clamp(std::nearbyint((x - d.low) / step) * step + d.low, d.low, d.high);
    }
    const double x = random_rng_.uniform(d.low, d.high);
    return d.low == d.high ? x : std::min(x, below_max(d.high));
  }
  if (d.log) {
    const double x =
        random_rng_.uniform(std::log(d.low - 0.5 * step), std::log(d.high + 0.5 * step));
    return std::clamp(std::nearbyint(std::exp(x)), d.low, d.high);
  }
  const double x = random_rng_.uniform(d.low - 0.5 * step, d.high + 0.5 * step);
  return std::clamp(std::nearbyint((x - d.low) / step) * step + d.low, d.low, d.high);
}

double TpeSampler::sample_model(std::size_t p, const std::vector<TrialRecord>& history,
                                std::size_t finished) {
  const double sign = maximize_ ? -1.0 : 1.0;
  std::vector<Rank> ranks;
  std::vector<std::optional<double>> values;
  for (const auto& t : history) {
    switch (t.state) {
      case TrialRecord::State::Failed:
        continue;
      case TrialRecord::State::Running:
        if (!options_.constant_liar) continue;
        ranks.push_back({kInf, kInf});
        break;
      case TrialRecord::State::Complete:
        ranks.push_back({-kInf, sign * t.value});
        break;
      case TrialRecord::State::Pruned:
        if (!t.last_intermediate)
          ranks.push_back({1, 0.0});
        else if (std::isnan(t.last_intermediate->second))
          ranks.push_back({-t.last_intermediate->first, kInf});
        else
          ranks.push_back({-t.last_intermediate->first, sign * t.last_intermediate->second});
        break;
    }
    values.push_back(p < t.params.size() ? t.params[p] : std::nullopt);
  }
  // _split_observation_pairs: a stable sort by rank, the first gamma(n) are "below";
  // both sides keep chronological order, and trials without this parameter drop out.
  std::vector<std::size_t> order(ranks.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return ranks[a] < ranks[b]; });
  const std::size_t n_below = std::min(default_gamma(finished), order.size());
  std::vector<std::size_t> below_ids(order.begin(),
                                     order.begin() + static_cast<std::ptrdiff_t>(n_below));
  std::vector<std::size_t> above_ids(order.begin() + static_cast<std::ptrdiff_t>(n_below),
                                     order.end());
  std::sort(below_ids.begin(), below_ids.end());
  std::sort(above_ids.begin(), above_ids.end());
  const auto column = [&](const std::vector<std::size_t>& ids) {
    std::vector<std::vector<double>> observed(1);
    for (const auto i : ids)
      if (values[i] && !std::isnan(*values[i])) observed[0].push_back(*values[i]);
    return observed;
  };
  const std::vector<Distribution> one{space_[p]};
  const ParzenEstimator below(column(below_ids), one, options_.estimator);
  const ParzenEstimator above(column(above_ids), one, options_.estimator);
  const auto samples = below.sample(rng_, options_.n_ei_candidates);
  const auto log_l = below.log_pdf(samples);
  const auto log_g = above.log_pdf(samples);
  // np.argmax of log_l - log_g: the first maximum, or the first NaN.
  std::size_t best = 0;
  for (std::size_t i = 0; i < log_l.size(); ++i) {
    const double score = log_l[i] - log_g[i];
    const double best_score = log_l[best] - log_g[best];
    if (std::isnan(best_score)) break;
    if (std::isnan(score) || score > best_score) best = i;
  }
  return samples[0][best];
}

}  // namespace slurmtune::core::tpe
