#include "core/search/gp/target_transform.hpp"

#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <numeric>

#include "core/search/gp/standard_normal.hpp"

namespace slurmtune::core::gp {

namespace {

double normal_quantile(double u) {
  return -std::sqrt(2.0) * boost::math::erfc_inv(2.0 * u);
}

}  // namespace

std::vector<double> normal_scores(std::span<const double> values) {
  const std::size_t n = values.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> scores(n);
  for (std::size_t first = 0; first < n;) {
    std::size_t last = first + 1;
    while (last < n && values[order[last]] == values[order[first]])
      ++last;
    // Ranks first+1 .. last (1-based) share their mean; its plotting position is in (0, 1).
    const double mid_rank = 0.5 * static_cast<double>(first + 1 + last);
    const double z = normal_quantile((mid_rank - 0.5) / static_cast<double>(n));
    for (std::size_t k = first; k < last; ++k)
      scores[order[k]] = z;
    first = last;
  }
  return scores;
}

ScaledTargets scale_targets(TargetTransform transform, std::span<const double> targets) {
  ScaledTargets out{std::vector<double>(targets.begin(), targets.end()), {}};
  if (transform == TargetTransform::Copula) {
    out.scale.sorted_ = out.values;
    std::sort(out.scale.sorted_.begin(), out.scale.sorted_.end());
    out.values = normal_scores(targets);
  }
  if (out.values.empty()) return out;
  double sum = 0, sum2 = 0;
  for (const double y : out.values) {
    sum += y;
    sum2 += y * y;
  }
  const auto n = static_cast<double>(out.values.size());
  const double mean = sum / n;
  const double var = std::max(sum2 / n - mean * mean, 0.0);
  out.scale.shift_ = mean;
  out.scale.sd_ = var > 1e-300 ? std::sqrt(var) : 1.0;
  for (double& y : out.values)
    y = (y - mean) / out.scale.sd_;
  return out;
}

double TargetScale::target_units(double model_value) const {
  const double mapped = model_value * sd_ + shift_;
  if (sorted_.empty()) return mapped;
  // Invert the plotting position: u = (position + 0.5) / n over 0-based positions.
  const auto n = static_cast<double>(sorted_.size());
  const double position = std::clamp(normal_cdf(mapped) * n - 0.5, 0.0, n - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted_.size() - 1);
  const double t = position - static_cast<double>(below);
  return sorted_[below] + t * (sorted_[above] - sorted_[below]);
}

std::array<double, 3> TargetScale::target_interval(double mean, double half) const {
  if (!sorted_.empty())
    return {target_units(mean), target_units(mean - half), target_units(mean + half)};
  // Affine: the spread scales alone (the order of operations the explanations always had).
  const double centre = mean * sd_ + shift_;
  const double spread = half * sd_;
  return {centre, centre - spread, centre + spread};
}

}  // namespace slurmtune::core::gp
