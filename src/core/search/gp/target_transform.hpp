#pragma once
// How a model's targets are made fit for a GP with unit signal variance: standardised
// (mean 0, variance 1), or first mapped by a Gaussian copula (Salinas et al., ICML 2020):
// each target becomes the standard normal quantile of its rank among the targets. The
// copula keeps only their order, so one diverged trial's huge loss cannot squeeze every
// other target into a sliver near the mean, and the model sees the same data whatever
// monotone scale a trial reports on.
#include <array>
#include <span>
#include <vector>

#include "core/search/model_options.hpp"  // TargetTransform

namespace slurmtune::core::gp {

struct ScaledTargets;
/// `targets` (finite) in the model's units, and the map back. A constant set maps to 0.
ScaledTargets scale_targets(TargetTransform transform, std::span<const double> targets);

/// The map back from the model's units to targets, for explaining what the model expects.
class TargetScale {
 public:
  TargetScale() = default;  // the identity
  /// A value in the model's units as a target: the inverse of the standardisation and,
  /// under the copula, of the rank map (piecewise linear between the targets it was
  /// fitted on, clamped to their range).
  double target_units(double model_value) const;
  /// A prediction `mean` +- `half` (model units) as targets: {mean, low end, high end}.
  std::array<double, 3> target_interval(double mean, double half) const;

 private:
  friend ScaledTargets scale_targets(TargetTransform, std::span<const double>);
  std::vector<double> sorted_;  // the fitted targets, ascending (copula only)
  double shift_ = 0, sd_ = 1;   // standardisation of the (copula-mapped) targets
};

struct ScaledTargets {
  std::vector<double> values;  // in the model's units: mean 0, variance 1
  TargetScale scale;
};

/// The standard normal quantile of each value's mid-rank, (rank - 0.5) / n, ties sharing
/// their mean rank.
std::vector<double> normal_scores(std::span<const double> values);

}  // namespace slurmtune::core::gp
