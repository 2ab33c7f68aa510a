#include "core/search/optuna/parzen_estimator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <tuple>

#include "core/search/optuna/truncated_normal.hpp"

namespace slurmtune::core::tpe {
namespace {

constexpr double kEps = 1e-12;
constexpr double kSigma0Magnitude = 0.2;
const double kNormLogC = std::log(std::sqrt(2 * std::numbers::pi));  // truncnorm's

bool is_categorical(const Distribution& d) {
  return d.kind == Distribution::Kind::Categorical;
}

// np.round: halves to even (the default rounding mode).
double round_half_even(double x) {
  return std::nearbyint(x);
}

}  // namespace

std::vector<double> default_weights(std::size_t n) {
  if (n == 0) return {};
  if (n < 25) return std::vector<double>(n, 1.0);
  // np.concatenate([np.linspace(1.0 / n, 1.0, num=n - 25), np.ones(25)])
  const std::size_t ramp = n - 25;
  const double start = 1.0 / static_cast<double>(n);
  std::vector<double> w;
  w.reserve(n);
  if (ramp == 1) w.push_back(start);
  if (ramp > 1) {
    const double step = (1.0 - start) / static_cast<double>(ramp - 1);
    for (std::size_t i = 0; i < ramp; ++i)
      w.push_back(static_cast<double>(i) * step + start);
    w.back() = 1.0;
  }
  w.resize(n, 1.0);
  return w;
}

ParzenEstimator::ParzenEstimator(const std::vector<std::vector<double>>& observations,
                                 const std::vector<Distribution>& space,
                                 const EstimatorOptions& options,
                                 const std::optional<std::vector<double>>& predetermined_weights)
    : space_(space), options_(options) {
  if (observations.size() != space.size() || space.empty())
    throw std::invalid_argument("ParzenEstimator: one observation column per parameter");
  observations_ = observations.front().size();
  if (predetermined_weights && predetermined_weights->size() != observations_)
    throw std::invalid_argument("ParzenEstimator: one predetermined weight per observation");
  weights_ = predetermined_weights ? *predetermined_weights : default_weights(observations_);
  if (has_prior()) weights_.push_back(options_.prior_weight);
  if (options_.multivariate) {
    const double n = static_cast<double>(std::max<std::size_t>(observations_, 1));
    sigma0_ = kSigma0Magnitude * std::pow(n, -1.0 / (static_cast<double>(space.size()) + 4));
  }
  for (std::size_t p = 0; p < space.size(); ++p) {
    if (!is_categorical(space[p])) {
      kernels_.push_back(numeric_kernel(space[p], observations[p]));
      continue;
    }
    std::vector<std::uint32_t> row_of;
    row_of.reserve(observations_);
    for (const double c : observations[p])
      row_of.push_back(static_cast<std::uint32_t>(c));
    kernels_.push_back(categorical_kernel(space[p], std::move(row_of)));
  }
  normalise_weights();
}

ParzenEstimator::ParzenEstimator(const Distribution& d, const Slices& slices,
                                 const EstimatorOptions& options)
    : space_{d}, options_(options) {
  if (options_.multivariate)
    throw std::invalid_argument("ParzenEstimator: binned estimators are univariate");
  observations_ = slices.observations;
  std::vector<double> mus;
  std::vector<std::uint32_t> row_of;
  for (std::size_t b = 0; b < slices.mass.size(); ++b) {
    if (slices.mass[b] <= 0) continue;
    weights_.push_back(slices.mass[b]);
    mus.push_back(slices.mean[b]);
    row_of.push_back(static_cast<std::uint32_t>(b));
  }
  const bool prior = has_prior();
  if (prior) weights_.push_back(options_.prior_weight);
  if (is_categorical(d)) {
    kernels_.push_back(categorical_kernel(d, std::move(row_of)));
  } else {
    Kernel k = bounded_kernel(d);
    k.binned = true;
    place_components(k, std::move(mus), observations_ + (prior ? 1 : 0));
    if (k.q)
      for (const double sigma : k.sigmas)
        k.log_step.push_back(std::log(*k.q / sigma));
    kernels_.push_back(std::move(k));
  }
  normalise_weights();
}

void ParzenEstimator::normalise_weights() {
  const double total = numpy_sum(weights_);
  for (double& x : weights_)
    x /= total;
  // One categorical parameter takes log_pdf's shortcut, which needs no log weights.
  if (space_.size() == 1 && is_categorical(space_[0])) return;
  log_weights_.reserve(weights_.size());
  for (const double x : weights_)
    log_weights_.push_back(std::log(x));
}

ParzenEstimator::Kernel ParzenEstimator::categorical_kernel(
    const Distribution& d, std::vector<std::uint32_t> row_of) const {
  const bool prior = has_prior();
  const double fill =
      options_.prior_weight / static_cast<double>(prior ? observations_ + 1 : observations_);
  // Optuna gives every observation a row (fill everywhere, +1 at its choice, normalised)
  // and the prior a row of fill. Rows of the same choice are equal, value for value, so
  // each distinct row is built once (row c: choice c observed; the last: the prior's)
  // and components point at theirs: the same numbers, without a row per observation.
  Kernel k;
  for (std::size_t c = 0; c <= d.choices; ++c) {
    std::vector<double> row(d.choices, fill);
    if (c < d.choices) row[c] += 1;
    const double total = numpy_sum(row);
    std::vector<double> log_row;
    for (double& x : row) {
      x /= total;
      log_row.push_back(std::log(x));
    }
    k.rows.push_back(std::move(row));
    k.log_rows.push_back(std::move(log_row));
  }
  k.row_of = std::move(row_of);
  if (prior) k.row_of.push_back(static_cast<std::uint32_t>(d.choices));
  return k;
}

std::pair<double, double> estimator_bounds(const Distribution& d) {
  if (d.kind == Distribution::Kind::Float) {
    if (d.log) return {std::log(d.low), std::log(d.high)};
    if (d.step) return {d.low - 0.5 * *d.step, d.high + 0.5 * *d.step};
    return {d.low, d.high};
  }
  if (d.log) return {std::log(d.low - 0.5), std::log(d.high + 0.5)};
  const double q = d.step.value_or(1.0);
  return {d.low - 0.5 * q, d.high + 0.5 * q};
}

ParzenEstimator::Kernel ParzenEstimator::bounded_kernel(const Distribution& d) const {
  Kernel k;
  std::tie(k.low, k.high) = estimator_bounds(d);
  if (!d.log && (d.kind == Distribution::Kind::Int || d.step)) k.q = d.step.value_or(1.0);
  return k;
}

ParzenEstimator::Kernel ParzenEstimator::numeric_kernel(const Distribution& d,
                                                        std::vector<double> observed) const {
  Kernel k = bounded_kernel(d);
  if (d.log)  // _transform_to_uniform
    for (double& x : observed)
      x = std::log(x);
  const std::size_t n = observed.size() + (has_prior() ? 1 : 0);
  place_components(k, std::move(observed), n);
  return k;
}

void ParzenEstimator::place_components(Kernel& k, std::vector<double> mus,
                                       std::size_t clip_n) const {
  const bool prior = has_prior();
  k.mus = std::move(mus);
  if (prior) k.mus.push_back(0.5 * (k.low + k.high));
  const std::size_t n = k.mus.size();
  k.sigmas.assign(n, 0.0);
  if (options_.multivariate) {
    for (double& s : k.sigmas)
      s = *sigma0_ * (k.high - k.low);
  } else {
    const auto order = numpy_argsort(k.mus);
    std::vector<double> with_ends{k.low};
    for (const auto i : order)
      with_ends.push_back(k.mus[i]);
    with_ends.push_back(k.high);
    std::vector<double> sorted_sigmas(n);
    for (std::size_t i = 0; i < n; ++i)
      sorted_sigmas[i] =
          std::max(with_ends[i + 1] - with_ends[i], with_ends[i + 2] - with_ends[i + 1]);
    if (!options_.consider_endpoints && with_ends.size() >= 4) {
      sorted_sigmas.front() = with_ends[2] - with_ends[1];
      sorted_sigmas.back() = with_ends[with_ends.size() - 2] - with_ends[with_ends.size() - 3];
    }
    for (std::size_t i = 0; i < n; ++i)
      k.sigmas[order[i]] = sorted_sigmas[i];
  }
  const double max_sigma = 1.0 * (k.high - k.low);
  const double min_sigma =
      options_.consider_magic_clip
          ? 1.0 * (k.high - k.low) / std::min(100.0, 1.0 + static_cast<double>(clip_n))
          : kEps;
  for (double& s : k.sigmas)
    s = std::min(std::max(s, min_sigma), max_sigma);  // np.clip
  if (prior) k.sigmas.back() = 1.0 * (k.high - k.low);
  // The standardised bounds of every component: per component, not per sample.
  for (std::size_t i = 0; i < n; ++i) {
    k.std_low.push_back((k.low - k.mus[i]) / k.sigmas[i]);
    k.std_high.push_back((k.high - k.mus[i]) / k.sigmas[i]);
  }
  k.log_mass.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    k.log_mass[i] = log_gauss_mass(k.std_low[i], k.std_high[i]);
}

double ParzenEstimator::from_estimator_space(const Distribution& d, const Kernel& k,
                                             double x) const {
  // _transform_from_uniform
  if (d.kind == Distribution::Kind::Float) {
    if (d.log) return std::exp(x);
    if (!d.step) return x;
    return std::clamp(round_half_even((x - d.low) / *k.q) * *k.q + d.low, d.low, d.high);
  }
  if (d.log) return std::clamp(round_half_even(std::exp(x)), d.low, d.high);
  return std::clamp(round_half_even((x - d.low) / *k.q) * *k.q + d.low, d.low, d.high);
}

std::vector<std::vector<double>> ParzenEstimator::sample(NumpyRandomState& rng,
                                                         std::size_t size) const {
  const auto active = rng.choice(weights_, size);
  std::vector<std::vector<double>> samples(space_.size(), std::vector<double>(size));
  for (std::size_t p = 0; p < space_.size(); ++p) {
    const Kernel& k = kernels_[p];
    auto& out = samples[p];
    if (is_categorical(space_[p])) {
      std::vector<double> quantile(size);  // rng.rand(n) first, then the cumulative rows
      for (double& u : quantile)
        u = rng.random_sample();
      for (std::size_t s = 0; s < size; ++s) {
        double cumulative = 0;
        std::size_t below = 0;
        for (const double w : k.rows[k.row_of[active[s]]])
          below += (cumulative += w) < quantile[s] ? 1 : 0;
        out[s] = static_cast<double>(below);
      }
      continue;
    }
    std::vector<double> quantile(size);  // truncnorm.rvs: all uniforms first
    for (double& u : quantile)
      u = rng.uniform(0, 1);
    for (std::size_t s = 0; s < size; ++s) {
      const double mu = k.mus[active[s]], sigma = k.sigmas[active[s]];
      const double x =
          from_quantile(quantile[s], (k.low - mu) / sigma, (k.high - mu) / sigma, mu, sigma);
      out[s] = from_estimator_space(space_[p], k, x);
    }
  }
  return samples;
}

std::vector<double> ParzenEstimator::log_pdf(
    const std::vector<std::vector<double>>& samples) const {
  const std::size_t n_samples = samples.front().size();
  const std::size_t components = weights_.size();
  if (n_samples == 0) return {};
  if (space_.size() == 1 && is_categorical(space_[0])) {
    // Optuna's shortcut: log of the mixture's probability of each choice.
    const Kernel& k = kernels_[0];
    std::vector<double> choice_log(space_[0].choices);
    for (std::size_t c = 0; c < choice_log.size(); ++c) {
      double dot = 0;
      for (std::size_t i = 0; i < components; ++i)
        dot += k.rows[k.row_of[i]][c] * weights_[i];
      choice_log[c] = std::log(dot);
    }
    std::vector<double> out(n_samples);
    for (std::size_t s = 0; s < n_samples; ++s)
      out[s] = choice_log[static_cast<std::size_t>(samples[0][s])];
    return out;
  }
  std::vector<double> component_log(n_samples * components, 0.0);  // [sample][component]
  for (std::size_t p = 0; p < space_.size(); ++p) {
    const Distribution& d = space_[p];
    const Kernel& k = kernels_[p];
    for (std::size_t s = 0; s < n_samples; ++s) {
      double x = samples[p][s];
      if (is_categorical(d)) {
        for (std::size_t i = 0; i < components; ++i)
          component_log[s * components + i] += k.log_rows[k.row_of[i]][static_cast<std::size_t>(x)];
        continue;
      }
      if (d.log) x = std::log(x);
      for (std::size_t i = 0; i < components; ++i) {
        const double mu = k.mus[i], sigma = k.sigmas[i];
        double lp;
        if (!k.q) {
          // truncnorm.logpdf with its normaliser precomputed (same operations, same order).
          const double z = (x - mu) / sigma;
          const double a = k.std_low[i], b = k.std_high[i];
          lp = a == b             ? std::numeric_limits<double>::quiet_NaN()
               : (z < a || b < z) ? -std::numeric_limits<double>::infinity()
                                  : -(z * z) / 2.0 - kNormLogC - k.log_mass[i];
        } else if (k.binned && sigma >= 2 * *k.q && x - *k.q / 2.0 >= k.low &&
                   x + *k.q / 2.0 <= k.high) {
          // Binned: a step's mass as density times width where the kernel is at least
          // two steps wide (relative error below 1 %), one exp instead of four calls.
          const double z = (x - mu) / sigma;
          lp = -(z * z) / 2.0 - kNormLogC + k.log_step[i] - k.log_mass[i];
        } else {
          const double upper = std::min(x + *k.q / 2.0, k.high);
          const double lower = std::max(x - *k.q / 2.0, k.low);
          lp = log_gauss_mass((lower - mu) / sigma, (upper - mu) / sigma) - k.log_mass[i];
        }
        component_log[s * components + i] += lp;
      }
    }
  }
  std::vector<double> out(n_samples);
  std::vector<double> shifted(components);
  for (std::size_t s = 0; s < n_samples; ++s) {
    double* row = &component_log[s * components];
    double max = -std::numeric_limits<double>::infinity();
    bool nan = false;
    for (std::size_t i = 0; i < components; ++i) {
      row[i] += log_weights_[i];
      nan = nan || std::isnan(row[i]);
      max = std::max(max, row[i]);
    }
    if (nan) max = std::numeric_limits<double>::quiet_NaN();  // np.max propagates NaN
    // exp() of anything below -745.2 is +0 exactly: far components cost no exp() call.
    for (std::size_t i = 0; i < components; ++i) {
      const double shift = row[i] - max;
      shifted[i] = shift < -746.0 ? 0.0 : std::exp(shift);
    }
    out[s] = std::log(numpy_sum(shifted)) + max;
  }
  return out;
}

}  // namespace slurmtune::core::tpe
