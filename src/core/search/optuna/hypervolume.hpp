#pragma once
// The hypervolume arithmetic of Optuna 3.1's multi-objective TPE (optuna/_hypervolume:
// WFG, its two-dimensional sweep, the greedy hypervolume subset selection) and its
// non-domination ranks (samplers/_tpe/sampler.py), with Optuna's operation order, so
// that MOTPE's "below" set and its weights are Optuna's to the bit. Losses: smaller is
// better in every objective.
#include <cstddef>
#include <vector>

namespace slurmtune::core::tpe {

using Points = std::vector<std::vector<double>>;

/// WFG().compute(points, reference): the volume the points dominate up to `reference`
/// (every point must be <= it).
double hypervolume(const Points& points, const std::vector<double>& reference);

/// Optuna's reference point for `points`: per objective max(1.1 w, 0.9 w) of the worst
/// value w, a zero replaced by 1e-12.
std::vector<double> reference_point(const Points& points);

/// _calculate_nondomination_rank: 0 for the non-dominated points, 1 for those only they
/// dominate, and so on.
std::vector<int> nondomination_ranks(const Points& points);

/// _solve_hssp: `subset_size` of the points, chosen greedily by hypervolume
/// contribution; their `indices`, in the order chosen.
std::vector<std::size_t> solve_hssp(const Points& points, const std::vector<std::size_t>& indices,
                                    std::size_t subset_size, const std::vector<double>& reference);

/// _calculate_weights_below_for_multi_objective over `points` (the below set's losses,
/// feasible ones only): each point's hypervolume contribution + 1e-12, divided by the
/// largest and clipped to [0, 1]; 1 for a single point.
std::vector<double> contribution_weights(const Points& points);

}  // namespace slurmtune::core::tpe
