#include "core/search/gp/rung_weighting.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace slurmtune::core {

double concordance(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size() || a.size() < 2)
    throw UsageError("concordance: needs two rankings of one length, at least 2");
  double alike = 0, pairs = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      alike += (da == 0 || db == 0) ? 0.5 : (da > 0) == (db > 0) ? 1.0 : 0.0;
      pairs += 1;
    }
  return alike / pairs;
}

std::map<double, double> rung_weights(const std::map<double, std::optional<double>>& agreement,
                                      double fallback) {
  std::map<double, double> weights;
  double total = 0;
  for (const auto& [rung, c] : agreement) {
    if (!c) continue;
    const double w = std::max(0.0, 2 * *c - 1);
    if (w > 0) {
      weights[rung] = w;
      total += w;
    }
  }
  if (total <= 0) return {{fallback, 1.0}};
  for (auto& [rung, w] : weights)
    w /= total;
  return weights;
}

}  // namespace slurmtune::core
