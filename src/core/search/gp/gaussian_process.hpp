#pragma once
// Gaussian-process regression for model-based search: an ARD Matérn-5/2 kernel with a
// signal variance, per-input length scales and a homoscedastic noise variance, a zero
// mean (callers standardise their targets), exact inference through Eigen's Cholesky
// factorisation, and hyperparameters fitted by maximising the log marginal likelihood
// plus weak log-normal priors (iRprop- on log parameters, inside fixed boxes). Plain
// std types at the interface; Eigen stays inside the implementation.
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "core/search/model_options.hpp"  // LengthScalePrior

namespace slurmtune::core::gp {

struct Hyperparameters {
  double signal_variance = 1.0;
  std::vector<double> length_scales;  ///< one per input dimension
  double noise_variance = 1e-2;
  /// Input warping (Snoek et al. 2014, "Input warping for Bayesian optimization of
  /// non-stationary functions"): input `warped_dims[k]`, where it lies in [0, 1], enters
  /// the kernel as the Kumaraswamy CDF 1 - (1 - t^a)^b of t = eps + (1 - 2 eps) x, with
  /// a = warp_a[k], b = warp_b[k]. Empty: every input as it is.
  std::vector<std::size_t> warped_dims;
  std::vector<double> warp_a, warp_b;
  friend bool operator==(const Hyperparameters&, const Hyperparameters&) = default;
  template <class Archive>
  void serialize(Archive& archive) {
    archive(signal_variance, length_scales, noise_variance, warped_dims, warp_a, warp_b);
  }
};

/// Default starting point for `dims` inputs in the unit cube: the priors' medians.
Hyperparameters default_hyperparameters(std::size_t dims,
                                        LengthScalePrior prior = LengthScalePrior::Fixed);

/// Observations: `inputs` holds n rows of `dims` numbers (row-major), `targets` n values.
struct Data {
  std::size_t dims = 0;
  std::vector<double> inputs;
  std::vector<double> targets;
  std::size_t size() const { return targets.size(); }
  std::span<const double> row(std::size_t i) const { return {inputs.data() + i * dims, dims}; }
};

/// The Matérn-5/2 covariance of two inputs under `h` (noise not included).
double matern52(std::span<const double> a, std::span<const double> b, const Hyperparameters& h);

struct Prediction {
  double mean = 0;
  double variance = 0;  ///< of the latent function (noise not included)
};

/// log p(targets) + log prior, and its gradient in the log parameters (signal, each length
/// scale, each warped input's a and b, noise: dims + 2 warped + 2 numbers). Exposed for
/// the tests.
struct Objective {
  double value = 0;
  std::vector<double> gradient;
};

class Posterior {
 public:
  /// Conditions the process on `data`. A kernel matrix that is not numerically positive
  /// definite gets growing jitter on its diagonal (up to 1e-4 of the signal variance)
  /// before the factorisation is refused with a ComputeError.
  Posterior(Data data, Hyperparameters h);
  ~Posterior();
  Posterior(Posterior&&) noexcept;
  Posterior& operator=(Posterior&&) noexcept;

  /// Mean and variance at each of `points` (rows of dims numbers).
  std::vector<Prediction> predict(std::span<const double> points) const;
  /// The mean at each of `rows`' own inputs given every other observation (leave one
  /// out, without refitting: Rasmussen and Williams 2006, eq. 5.12).
  std::vector<double> leave_one_out_means(std::span<const std::size_t> rows) const;
  /// One draw of the latent function at all of `points` together (Thompson sampling):
  /// the posterior mean plus the Cholesky factor of the posterior covariance among them
  /// times `normals` (one standard normal a point, the caller's stream, so that a draw is
  /// a function of the seed). Points the posterior cannot tell apart (near-duplicates) get
  /// growing jitter on that factor's diagonal, and past 1e-2 of the signal variance
  /// each point is drawn from its own marginal alone.
  std::vector<double> joint_sample(std::span<const double> points,
                                   std::span<const double> normals) const;
  /// log p(targets | inputs, hyperparameters).
  double log_marginal_likelihood() const;
  const Hyperparameters& hyperparameters() const;
  const Data& data() const;

 private:
  friend Objective fit_objective(const Data& data, const Hyperparameters& h,
                                 LengthScalePrior prior);
  struct Factor;
  Data data_;
  Hyperparameters h_;
  std::unique_ptr<Factor> factor_;
};

struct FitOptions {
  int iterations = 40;  ///< iRprop- steps (each one factorisation and one gradient)
  LengthScalePrior length_prior = LengthScalePrior::Fixed;
  /// Inputs whose warping is fitted too (numbers in [0, 1], not one-hot choices), each
  /// from the identity (a = b = 1) unless `start` warps it already. Empty: none.
  std::vector<std::size_t> warped_dims;
  /// Groups of inputs whose length scales are fitted as one (each starts at its first
  /// member's; the prior counts once per input). One choice's one-hot inputs tied make every
  /// two of its values equally far apart: an exchangeable kernel per choice.
  std::vector<std::vector<std::size_t>> tied_length_scales;
};

/// The hyperparameters that maximise log marginal likelihood + log prior, from `start`
/// (the previous fit, on a refit). Deterministic: no random restarts.
Hyperparameters fit(const Data& data, const Hyperparameters& start, const FitOptions& options);

Objective fit_objective(const Data& data, const Hyperparameters& h,
                        LengthScalePrior prior = LengthScalePrior::Fixed);

/// The largest point of a refit ladder (first, then each point times `growth`, rounded up)
/// not above `n`: a model refits its kernel when its observations reach the next point, on
/// that many, so a fit depends on the events and not on when it was asked for.
std::size_t refit_point(std::size_t n, double growth, std::size_t first);
/// The ladder's point after `point`.
std::size_t next_refit_point(std::size_t point, double growth);

}  // namespace slurmtune::core::gp
