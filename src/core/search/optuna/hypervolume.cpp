#include "core/search/optuna/hypervolume.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/search/optuna/numpy_compat.hpp"

namespace slurmtune::core::tpe {
namespace {

constexpr double kEps = 1e-12;

// _compute_2points_volume: |prod(a - b)|, the product taken left to right.
double box_volume(const std::vector<double>& a, const std::vector<double>& b) {
  double product = a[0] - b[0];
  for (std::size_t k = 1; k < a.size(); ++k)
    product *= a[k] - b[k];
  return std::abs(product);
}

std::vector<double> elementwise_max(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out(a.size());
  for (std::size_t k = 0; k < a.size(); ++k)
    out[k] = std::max(a[k], b[k]);
  return out;
}

// _compute_2d: sorted by the first objective, ties by the second descending (np.lexsort,
// stable), then a sweep that lowers the reference's second coordinate.
double volume_2d(const Points& points, std::vector<double> reference) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a][0] != points[b][0]) return points[a][0] < points[b][0];
    return -points[a][1] < -points[b][1];
  });
  double volume = 0.0;
  for (const auto i : order) {
    if (reference[1] < points[i][1]) continue;
    volume += box_volume(reference, points[i]);
    reference[1] = points[i][1];
  }
  return volume;
}

class Wfg {
 public:
  explicit Wfg(std::vector<double> reference) : reference_(std::move(reference)) {}

  double compute(const Points& points) const {
    const std::size_t n = points.size();
    if (reference_.size() == 2) return volume_2d(points, reference_);
    if (n == 1) return box_volume(points[0], reference_);
    if (n == 2) {
      double volume = 0.0;
      volume += box_volume(points[0], reference_);
      volume += box_volume(points[1], reference_);
      const auto corner = elementwise_max(points[0], points[1]);
      double intersection = reference_[0] - corner[0];
      for (std::size_t k = 1; k < corner.size(); ++k)
        intersection *= reference_[k] - corner[k];
      return volume - intersection;
    }
    std::vector<double> first(n);
    for (std::size_t i = 0; i < n; ++i)
      first[i] = points[i][0];
    const auto order = numpy_argsort(first);  // numpy's default (unstable) argsort
    Points sorted;
    for (const auto i : order)
      sorted.push_back(points[i]);
    double volume = 0.0;
    for (std::size_t i = 0; i < n; ++i)
      volume += exclusive(
          sorted[i], Points(sorted.begin() + static_cast<std::ptrdiff_t>(i + 1), sorted.end()));
    return volume;
  }

 private:
  double exclusive(const std::vector<double>& point, const Points& rest) const {
    double volume = box_volume(point, reference_);
    const Points limited = limit(point, rest);
    if (limited.size() == 1)
      volume -= box_volume(limited[0], reference_);
    else if (limited.size() > 1)
      volume -= compute(limited);
    return volume;
  }

  // _limit: every point raised to `point`, then those not beaten by the last kept one.
  static Points limit(const std::vector<double>& point, const Points& rest) {
    Points raised;
    for (const auto& p : rest)
      raised.push_back(elementwise_max(p, point));
    if (raised.size() <= 1) return raised;
    Points kept{raised[0]};
    std::size_t left = 0;
    for (std::size_t right = 1; right < raised.size(); ++right) {
      bool beaten = false;
      for (std::size_t k = 0; k < point.size(); ++k)
        beaten = beaten || raised[left][k] > raised[right][k];
      if (beaten) {
        left = right;
        kept.push_back(raised[left]);
      }
    }
    return kept;
  }

  std::vector<double> reference_;
};

}  // namespace

double hypervolume(const Points& points, const std::vector<double>& reference) {
  for (const auto& p : points)
    for (std::size_t k = 0; k < p.size(); ++k)
      if (!(p[k] <= reference[k]))
        throw std::invalid_argument("hypervolume: a point beyond the reference point");
  return Wfg(reference).compute(points);
}

std::vector<double> reference_point(const Points& points) {
  std::vector<double> worst = points.front();
  for (const auto& p : points)
    for (std::size_t k = 0; k < p.size(); ++k)
      worst[k] = std::max(worst[k], p[k]);
  for (double& w : worst) {
    w = std::max(1.1 * w, 0.9 * w);
    if (w == 0) w = kEps;
  }
  return worst;
}

std::vector<int> nondomination_ranks(const Points& points) {
  const std::size_t n = points.size();
  // dominated[i][j]: j dominates i (no better anywhere, worse somewhere).
  std::vector<std::vector<bool>> dominated(n, std::vector<bool>(n));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      bool all_ge = true, any_gt = false;
      for (std::size_t k = 0; k < points[i].size(); ++k) {
        all_ge = all_ge && points[i][k] >= points[j][k];
        any_gt = any_gt || points[i][k] > points[j][k];
      }
      dominated[i][j] = all_ge && any_gt;
    }
  std::vector<int> ranks(n, -1);
  std::size_t unranked = n;
  for (int rank = 0; unranked > 0; ++rank) {
    std::vector<std::size_t> now;
    for (std::size_t i = 0; i < n; ++i) {
      if (ranks[i] != -1) continue;
      bool beaten = false;
      for (std::size_t j = 0; j < n && !beaten; ++j)
        beaten = ranks[j] == -1 && dominated[i][j];
      if (!beaten) now.push_back(i);
    }
    for (const auto i : now)
      ranks[i] = rank;
    unranked -= now.size();
  }
  return ranks;
}

std::vector<std::size_t> solve_hssp(const Points& points, const std::vector<std::size_t>& indices,
                                    std::size_t subset_size, const std::vector<double>& reference) {
  std::vector<double> contributions;
  for (const auto& p : points)
    contributions.push_back(hypervolume({p}, reference));
  Points selected;
  std::vector<std::size_t> chosen;
  double hv_selected = 0.0;
  while (chosen.size() < subset_size) {
    const auto best = static_cast<std::size_t>(
        std::max_element(contributions.begin(), contributions.end()) - contributions.begin());
    contributions[best] = -1;  // Optuna's mark for a chosen point
    const auto& vec = points[best];
    for (std::size_t j = 0; j < points.size(); ++j) {
      if (contributions[j] == -1) continue;
      Points with = selected;
      with.push_back(elementwise_max(vec, points[j]));
      contributions[j] -= hypervolume(with, reference) - hv_selected;
    }
    selected.push_back(vec);
    chosen.push_back(indices[best]);
    hv_selected = hypervolume(selected, reference);
  }
  return chosen;
}

std::vector<double> contribution_weights(const Points& points) {
  const std::size_t n = points.size();
  if (n == 0) return {};
  if (n == 1) return {1.0};
  const auto reference = reference_point(points);
  const double hv = hypervolume(points, reference);
  std::vector<double> contributions;
  for (std::size_t i = 0; i < n; ++i) {
    Points others;
    for (std::size_t j = 0; j < n; ++j)
      if (j != i) others.push_back(points[j]);
    contributions.push_back(hv - hypervolume(others, reference) + kEps);
  }
  const double largest = *std::max_element(contributions.begin(), contributions.end());
  for (double& c : contributions)
    c = std::clamp(c / largest, 0.0, 1.0);
  return contributions;
}

}  // namespace slurmtune::core::tpe
