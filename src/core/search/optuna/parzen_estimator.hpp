#pragma once
// The Parzen estimator of Optuna 3.1's TPE (optuna/samplers/_tpe/parzen_estimator.py):
// a mixture of one truncated normal (or categorical kernel) per observation plus a
// prior, with the same bandwidths, weights, sampling order and log-density arithmetic,
// so that suggestions built on it equal Optuna's.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/search/optuna/numpy_compat.hpp"
#include "core/search/optuna/sampler_options.hpp"

namespace slurmtune::core::tpe {

/// A parameter's distribution as Optuna describes it.
struct Distribution {
  enum class Kind { Float, Int, Categorical };
  Kind kind = Kind::Float;
  double low = 0, high = 0;    ///< Float and Int bounds (both included, as Optuna's)
  std::optional<double> step;  ///< Float: optional step; Int: its step (1 by default)
  bool log = false;
  std::size_t choices = 0;  ///< Categorical: number of choices (values are their indices)
};

/// One parameter's observations summarised per slice of its range (per choice for a
/// categorical): the slices' summed weights, unnormalised, and weighted means in the
/// estimator's space (logged for log domains). Empty slices have mass 0.
struct Slices {
  std::vector<double> mass, mean;
  std::size_t observations = 0;  ///< how many were summarised
};

/// A numeric parameter's bounds in the estimator's space: logged, or widened by half a
/// step (Optuna's _calculate_parzen_bounds).
std::pair<double, double> estimator_bounds(const Distribution& d);

/// Optuna's default_weights(n): 1 for the newest 25 observations, a ramp from 1/n below.
std::vector<double> default_weights(std::size_t n);

class ParzenEstimator {
 public:
  /// `observations[p]` holds parameter p's values of every observation, in Optuna's
  /// internal representation (numbers as they are, log domains not yet logged, choice
  /// indices for categoricals); all parameters have the same number of observations.
  /// `predetermined_weights`: the observations' weights in place of default_weights
  /// (MOTPE's hypervolume contributions), one per observation.
  ParzenEstimator(const std::vector<std::vector<double>>& observations,
                  const std::vector<Distribution>& space, const EstimatorOptions& options,
                  const std::optional<std::vector<double>>& predetermined_weights = std::nullopt);
  /// One parameter's binned estimator (`semantics = "binned"`): a component per
  /// non-empty slice at its mean, carrying its mass, with Optuna's bandwidth rule
  /// applied to the means and its magic clip counting every observation. For a
  /// categorical the same mixture as one row per observation, summed per choice.
  ParzenEstimator(const Distribution& d, const Slices& slices, const EstimatorOptions& options);

  /// `size` samples of every parameter ([p][k], internal representation), drawing from
  /// `rng` exactly as Optuna does.
  std::vector<std::vector<double>> sample(NumpyRandomState& rng, std::size_t size) const;
  /// Log density of each sample ([p][k] as sample() returns).
  std::vector<double> log_pdf(const std::vector<std::vector<double>>& samples) const;

 private:
  struct Kernel {
    double low = 0, high = 0;  // bounds in the estimator's space (logged, half-step widened)
    std::optional<double> q;   // step of stepped floats and ints without log
    bool binned = false;       // components are slices of observations
    std::vector<double> mus, sigmas;
    std::vector<double> log_step;  // binned, stepped: log(q / sigma) per component
    // Per component: log of its normal's mass inside [low, high] (log_gauss_mass of the
    // standardised bounds), the normaliser every density evaluation subtracts. Computed
    // once per estimator instead of once per sample; the values are the same.
    std::vector<double> log_mass;
    std::vector<double> std_low, std_high;  // (low - mu) / sigma, (high - mu) / sigma
    // Categorical: the distinct rows ([row][choice]) and their logs; component i's
    // probabilities are rows[row_of[i]].
    std::vector<std::vector<double>> rows, log_rows;
    std::vector<std::uint32_t> row_of;
  };
  /// Optuna keeps a prior component when asked to, and always without observations.
  bool has_prior() const { return options_.consider_prior || observations_ == 0; }
  /// A numeric kernel's bounds (logged, or widened by half a step) and step; no components.
  Kernel bounded_kernel(const Distribution& d) const;
  Kernel numeric_kernel(const Distribution& d, std::vector<double> observed) const;
  /// Components at `mus` (estimator space, sorted when `sorted`), Optuna's bandwidths;
  /// `clip_n` is the component count its magic clip assumes.
  void place_components(Kernel& k, std::vector<double> mus, std::size_t clip_n) const;
  /// Optuna's rows (fill everywhere, +1 at the observed choice) for the choices
  /// `row_of` names, the prior's last.
  Kernel categorical_kernel(const Distribution& d, std::vector<std::uint32_t> row_of) const;
  /// Normalises weights_ and takes their logs where log_pdf needs them.
  void normalise_weights();
  double from_estimator_space(const Distribution& d, const Kernel& k, double x) const;

  std::vector<Distribution> space_;
  EstimatorOptions options_;
  std::size_t observations_ = 0;
  std::optional<double> sigma0_;  // multivariate: Scott's rule
  std::vector<double> weights_;   // per component (observations, then the prior)
  std::vector<double> log_weights_;
  std::vector<Kernel> kernels_;  // per parameter
};

}  // namespace slurmtune::core::tpe
