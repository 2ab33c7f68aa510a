#pragma once
// The options of Optuna's TPE and NSGA-II samplers, as plain data: what the study file
// sets ([sampler], core/search/sampler_spec.hpp) without the samplers' headers.
#include <cstddef>
#include <optional>
#include <vector>

namespace slurmtune::core::tpe {

struct EstimatorOptions {
  bool consider_prior = true;
  double prior_weight = 1.0;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  bool multivariate = false;
};

struct TpeOptions {
  EstimatorOptions estimator;  ///< its `multivariate` switches to joint sampling
  std::size_t n_startup_trials = 10;
  std::size_t n_ei_candidates = 24;
  /// gamma(n) = min(ceil(gamma_fraction n), gamma_max): Optuna's default_gamma.
  double gamma_fraction = 0.1;
  std::size_t gamma_max = 25;
  bool constant_liar = false;
  /// With `estimator.multivariate`: Optuna's group decomposition, one joint draw per group
  /// of parameters that the finished trials always have together (a conditional space).
  bool group = false;
  /// Several objectives (Optuna's MOTPE): whether each is maximised; empty for one (the
  /// sampler's `maximize`). Only completed trials count then, split by non-domination
  /// rank and hypervolume subset selection, "below" weighted by hypervolume contribution.
  std::vector<bool> objectives_maximize;
  /// Optuna's constraints_func is given: feasible trials rank first, the others by
  /// their total violation (TrialRecord::constraints).
  bool constrained = false;
  /// `semantics = "binned"`: a parameter's "above" density with more than `bins`
  /// observations is built from slices of its range (RankedHistory) instead of one
  /// kernel per observation. 0: Optuna's estimator, exactly.
  std::size_t bins = 0;
  /// With bins: the binned estimator only once this many trials have finished, Optuna's
  /// exact one before (`semantics = "auto"`, the study file's default: Optuna's
  /// suggestions while they are cheap, a bounded cost after). 0: binned throughout.
  std::size_t binned_from = 0;
  /// `semantics = "auto"` (the default of the study file) resolves to this.
  static constexpr std::size_t auto_binned_from = 5000;
};

}  // namespace slurmtune::core::tpe

namespace slurmtune::core::nsga2 {

struct Nsga2Options {
  std::size_t population_size = 50;
  std::optional<double> mutation_prob;  ///< nullopt: 1 / (parameters inherited)
  double crossover_prob = 0.9;
  double swapping_prob = 0.5;
};

}  // namespace slurmtune::core::nsga2
