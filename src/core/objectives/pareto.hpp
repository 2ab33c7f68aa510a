#pragma once
// Pareto dominance among trials with several objectives, as Optuna 3.1 decides it
// (optuna/study/_multi_objective.py, samplers/nsgaii/_sampler.py): losses are the
// objectives with maximised ones negated; a trial dominates another when it is no worse
// in every objective and not equal in all. With constraints, Deb's constrained
// domination: feasible before infeasible, infeasible ones by their total violation.
// The orders below are Optuna's to the element, since NSGA-II's choices depend on them.
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace slurmtune::core {

/// `a` dominates `b` (losses: smaller is better).
bool dominates(std::span<const double> a, std::span<const double> b);

/// A finished trial as dominance sees it.
struct ParetoPoint {
  std::vector<double> loss;  ///< objectives, maximised ones negated
  /// The constraints' values (feasible where <= 0); nullopt where the trial has none.
  std::optional<std::vector<double>> constraints;
};

/// Sum of the positive constraint values (0: feasible).
double total_violation(const std::vector<double>& constraints);
bool is_feasible(const ParetoPoint& p);

/// Optuna's _constrained_dominates for two completed trials.
bool constrained_dominates(const ParetoPoint& a, const ParetoPoint& b);

/// Whether member i dominates member j (indices into the caller's points).
using Dominance = std::function<bool(std::size_t, std::size_t)>;

/// Non-dominated fronts of `members`, first the non-dominated ones, each front in the
/// order Optuna's _fast_non_dominated_sort leaves it (a member taken out is replaced by
/// the last one).
std::vector<std::vector<std::size_t>> nondominated_fronts(std::vector<std::size_t> members,
                                                          const Dominance& dominance);

/// Optuna's _crowding_distance_sort: `members` sorted by crowding distance, largest
/// first (a stable sort per objective, then by distance, then reversed).
void crowding_distance_sort(std::vector<std::size_t>& members,
                            const std::vector<std::vector<double>>& values);

/// The trials no other dominates, by index in `points`. With `constrained`, only
/// feasible ones count (an infeasible trial is shown apart, never on the front).
std::vector<std::size_t> pareto_front(const std::vector<ParetoPoint>& points, bool constrained);

}  // namespace slurmtune::core
