#include "core/search/optuna/optuna_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace slurmtune::core::tpe {

bool conditions_hold(const std::vector<Condition>& conditions, const std::vector<double>& chosen) {
  for (const auto& c : conditions) {
    const double v = chosen[c.parent];
    if (std::isnan(v) || std::find(c.values.begin(), c.values.end(), v) == c.values.end())
      return false;
  }
  return true;
}

bool is_single(const Distribution& d) {
  if (d.kind == Distribution::Kind::Categorical) return d.choices == 1;
  if (d.low == d.high) return true;
  return !(d.kind == Distribution::Kind::Int && d.log) && d.step && d.high - d.low < *d.step;
}

double single_value(const Distribution& d) {
  return d.kind == Distribution::Kind::Categorical ? 0.0 : d.low;
}

double below_max(double high) {
  return std::nextafter(high, high - 1);
}

double sample_random(const Distribution& d, NumpyRandomState& rng) {
  if (d.kind == Distribution::Kind::Categorical) {
    std::size_t best = 0;
    double best_value = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < d.choices; ++c) {
      const double u = rng.uniform(0, 1);
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
      const double x = rng.uniform(std::log(d.low), std::log(d.high));
      return d.low == d.high ? std::exp(x) : std::min(std::exp(x), below_max(d.high));
    }
    if (d.step) {
      const double x = rng.uniform(d.low - 0.5 * step, d.high + 0.5 * step);
      return std::clamp(std::nearbyint((x - d.low) / step) * step + d.low, d.low, d.high);
    }
    const double x = rng.uniform(d.low, d.high);
    return d.low == d.high ? x : std::min(x, below_max(d.high));
  }
  if (d.log) {
    const double x = rng.uniform(std::log(d.low - 0.5 * step), std::log(d.high + 0.5 * step));
    return std::clamp(std::nearbyint(std::exp(x)), d.low, d.high);
  }
  const double x = rng.uniform(d.low - 0.5 * step, d.high + 0.5 * step);
  return std::clamp(std::nearbyint((x - d.low) / step) * step + d.low, d.low, d.high);
}

}  // namespace slurmtune::core::tpe
