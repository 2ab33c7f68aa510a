#include "core/search/gp/gaussian_process.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace slurmtune::core::gp {
namespace {

using Matrix = Eigen::MatrixXd;
using Vector = Eigen::VectorXd;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

const double kSqrt5 = std::sqrt(5.0);

// Boxes and weak log-normal priors of the log parameters. Targets are standardised and
// inputs lie in the unit cube, so these are scale-free: a length scale of 0.5 spans half
// an input's range; 1e-2 noise is 1 % of the targets' variance.
struct LogPrior {
  double mean, sd, low, high;
};
const LogPrior kSignalPrior{0.0, 1.5, std::log(1e-2), std::log(1e2)};
const LogPrior kLengthPrior{std::log(0.5), 1.5, std::log(1e-2), std::log(1e2)};
const LogPrior kNoisePrior{std::log(1e-2), 2.0, std::log(1e-6), std::log(1.0)};
// A warping's a and b: log-normal around the identity (1), as BoTorch's Warp has them.
const LogPrior kWarpPrior{0.0, std::sqrt(0.75), std::log(0.1), std::log(10.0)};
// Warped inputs are first squeezed into [eps, 1 - eps]: the CDF's derivatives in a and b
// stay finite at the bounds.
constexpr double kWarpMargin = 1e-6;

double squeezed(double x) {
  return kWarpMargin + (1.0 - 2.0 * kWarpMargin) * x;
}

// The Kumaraswamy CDF of input x; a value outside [0, 1] (an absent parameter's input)
// passes unchanged.
double warped(double x, double a, double b) {
  if (x < 0.0 || x > 1.0) return x;
  return 1.0 - std::pow(1.0 - std::pow(squeezed(x), a), b);
}

// d warped / d log a and d log b at x (0 outside [0, 1]).
std::pair<double, double> warp_gradient(double x, double a, double b) {
  if (x < 0.0 || x > 1.0) return {0.0, 0.0};
  const double t = squeezed(x);
  const double ta = std::pow(t, a);
  const double rest = 1.0 - ta;
  return {a * b * std::pow(rest, b - 1.0) * ta * std::log(t),
          -b * std::pow(rest, b) * std::log(rest)};
}

// Factors `k` with the least jitter on its diagonal that succeeds: none first where
// `plain_first`, then 1e-10 of `scale`, grown tenfold while at most `largest` of it. The
// jitter used, or nullopt where none did.
std::optional<double> jittered_cholesky(const Matrix& k, double scale, double largest,
                                        bool plain_first, Eigen::LLT<Matrix>& llt) {
  for (double jitter = plain_first ? 0 : 1e-10 * scale; jitter <= largest * scale;
       jitter = jitter == 0 ? 1e-10 * scale : jitter * 10) {
    Matrix kj = k;
    kj.diagonal().array() += jitter;
    llt.compute(kj);
    if (llt.info() == Eigen::Success) return jitter;
  }
  return std::nullopt;
}

// The inputs as the kernel sees them (warped where h warps) divided by their length
// scales, one row per point.
Matrix scaled(std::span<const double> points, std::size_t dims, const Hyperparameters& h) {
  const auto rows = static_cast<Eigen::Index>(dims == 0 ? 0 : points.size() / dims);
  Matrix z = Eigen::Map<const RowMajor>(points.data(), rows, static_cast<Eigen::Index>(dims));
  for (std::size_t k = 0; k < h.warped_dims.size(); ++k) {
    const auto column = static_cast<Eigen::Index>(h.warped_dims[k]);
    for (Eigen::Index i = 0; i < rows; ++i)
      z(i, column) = warped(z(i, column), h.warp_a[k], h.warp_b[k]);
  }
  for (std::size_t k = 0; k < dims; ++k)
    z.col(static_cast<Eigen::Index>(k)) /= h.length_scales[k];
  return z;
}

double matern_of_distance(double r, double variance) {
  const double s = kSqrt5 * r;
  return variance * (1.0 + s + s * s / 3.0) * std::exp(-s);
}

// Covariances between the rows of `a` and of `b` (both already scaled). Squared
// distances come from one matrix product (|a|^2 + |b|^2 - 2 a.b), the bulk of the cost
// of scoring hundreds of candidates; rounding can make a tiny one negative: clamped.
Matrix cross_covariance(const Matrix& a, const Matrix& b, double variance) {
  const Vector a2 = a.rowwise().squaredNorm();
  const Vector b2 = b.rowwise().squaredNorm();
  Matrix k = -2.0 * a * b.transpose();
  for (Eigen::Index j = 0; j < b.rows(); ++j)
    for (Eigen::Index i = 0; i < a.rows(); ++i)
      k(i, j) = matern_of_distance(std::sqrt(std::max(k(i, j) + a2(i) + b2(j), 0.0)), variance);
  return k;
}

void check(const Data& data, const Hyperparameters& h) {
  if (h.length_scales.size() != data.dims || data.inputs.size() != data.size() * data.dims)
    throw UsageError("gp: " + std::to_string(data.size()) + " targets, " +
                     std::to_string(data.inputs.size()) + " input numbers, " +
                     std::to_string(h.length_scales.size()) + " length scales for " +
                     std::to_string(data.dims) + " dimensions");
  const bool inside = std::all_of(h.warped_dims.begin(), h.warped_dims.end(),
                                  [&](std::size_t k) { return k < data.dims; });
  if (!inside || h.warp_a.size() != h.warped_dims.size() || h.warp_b.size() != h.warped_dims.size())
    throw UsageError("gp: " + std::to_string(h.warped_dims.size()) + " warped inputs with " +
                     std::to_string(h.warp_a.size()) + " and " + std::to_string(h.warp_b.size()) +
                     " warping parameters for " + std::to_string(data.dims) + " dimensions");
}

double log_prior(double log_value, const LogPrior& p, double& gradient) {
  const double d = (log_value - p.mean) / p.sd;
  gradient = -d / p.sd;
  return -0.5 * d * d;
}

// The sparse prior's scale of the inverse squared length scales (SAAS's 0.1).
constexpr double kSparseScale = 0.1;

// log p(log l), up to a constant, where rho = 1 / l^2 is half-Cauchy(0, kSparseScale):
// log(2 rho) (the change of variables, |d rho / d log l| = 2 rho) - log(1 + (rho / tau)^2).
// It peaks at rho = tau (l = 1 / sqrt(tau), about three input ranges) and falls by about 2
// per unit of log l on either side: every input starts irrelevant and pays for each e-fold
// it shortens, linearly rather than quadratically, so the few inputs the data need get short
// length scales and the rest stay long.
double sparse_log_prior(double log_length, double& gradient) {
  const double u = std::exp(-2.0 * log_length) / kSparseScale;
  gradient = -2.0 + 4.0 * u * u / (1.0 + u * u);
  return -2.0 * log_length - std::log1p(u * u);
}

// The log parameters in one vector: signal, each length scale, each warped input's a and
// b, noise.
std::vector<double> to_log(const Hyperparameters& h) {
  std::vector<double> theta{std::log(h.signal_variance)};
  for (const double l : h.length_scales)
    theta.push_back(std::log(l));
  for (std::size_t k = 0; k < h.warped_dims.size(); ++k) {
    theta.push_back(std::log(h.warp_a[k]));
    theta.push_back(std::log(h.warp_b[k]));
  }
  theta.push_back(std::log(h.noise_variance));
  return theta;
}

// `shape`'s dimensions and warped inputs with the values in `theta`.
Hyperparameters from_log(const std::vector<double>& theta, const Hyperparameters& shape) {
  Hyperparameters h;
  h.signal_variance = std::exp(theta.front());
  const std::size_t dims = shape.length_scales.size();
  for (std::size_t k = 1; k <= dims; ++k)
    h.length_scales.push_back(std::exp(theta[k]));
  h.warped_dims = shape.warped_dims;
  for (std::size_t k = 0; k < shape.warped_dims.size(); ++k) {
    h.warp_a.push_back(std::exp(theta[dims + 1 + 2 * k]));
    h.warp_b.push_back(std::exp(theta[dims + 2 + 2 * k]));
  }
  h.noise_variance = std::exp(theta.back());
  return h;
}

LogPrior length_prior(std::size_t dims, LengthScalePrior prior) {
  if (prior == LengthScalePrior::Fixed) return kLengthPrior;
  // Only the box and the starting point (the mode) of the sparse prior: its density is
  // sparse_log_prior's.
  if (prior == LengthScalePrior::Sparse)
    return {-0.5 * std::log(kSparseScale), 0.0, kLengthPrior.low, kLengthPrior.high};
  const double median =
      std::sqrt(2.0) + 0.5 * std::log(static_cast<double>(std::max<std::size_t>(dims, 1)));
  return {std::clamp(median, kLengthPrior.low, kLengthPrior.high), std::sqrt(3.0), kLengthPrior.low,
          kLengthPrior.high};
}

// The signal variance is fixed at 1 (the targets' standardised variance) under the
// dimension-scaled prior, as Hvarfner et al. and BoTorch have it: fitted, it trades long
// length scales for a large amplitude, and the posterior overshoots between observations.
const LogPrior kUnitSignal{0.0, 1.5, 0.0, 0.0};

// The priors of the log parameters (to_log's order).
class Priors {
 public:
  Priors(std::size_t dims, std::size_t warped, LengthScalePrior prior)
      : dims_(dims),
        count_(dims + 2 * warped + 2),
        signal_(prior == LengthScalePrior::DimensionScaled ? kUnitSignal : kSignalPrior),
        length_(length_prior(dims, prior)),
        sparse_(prior == LengthScalePrior::Sparse) {}
  const LogPrior& of(std::size_t index) const {
    if (index == 0) return signal_;
    if (index + 1 == count_) return kNoisePrior;
    return index <= dims_ ? length_ : kWarpPrior;
  }
  /// log p of parameter `index` at `log_value`, and its derivative in `gradient`.
  double log_density(std::size_t index, double log_value, double& gradient) const {
    const bool length = index > 0 && index <= dims_;
    return length && sparse_ ? sparse_log_prior(log_value, gradient)
                             : log_prior(log_value, of(index), gradient);
  }

 private:
  std::size_t dims_;
  std::size_t count_;
  LogPrior signal_;
  LogPrior length_;
  bool sparse_;
};

}  // namespace

struct Posterior::Factor {
  Matrix scaled_inputs;
  Eigen::LLT<Matrix> llt;
  Vector alpha;  // K^-1 y
  double jitter = 0;
};

Hyperparameters default_hyperparameters(std::size_t dims, LengthScalePrior prior) {
  const double length =
      prior == LengthScalePrior::Fixed ? 0.5 : std::exp(length_prior(dims, prior).mean);
  return {1.0, std::vector<double>(dims, length), 1e-2, {}, {}, {}};
}

double matern52(std::span<const double> a, std::span<const double> b, const Hyperparameters& h) {
  double r2 = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double d = (a[k] - b[k]) / h.length_scales[k];
    r2 += d * d;
  }
  return matern_of_distance(std::sqrt(r2), h.signal_variance);
}

Posterior::Posterior(Data data, Hyperparameters h)
    : data_(std::move(data)), h_(std::move(h)), factor_(std::make_unique<Factor>()) {
  check(data_, h_);
  auto& f = *factor_;
  f.scaled_inputs = scaled(data_.inputs, data_.dims, h_);
  Matrix k = cross_covariance(f.scaled_inputs, f.scaled_inputs, h_.signal_variance);
  k.diagonal().array() += h_.noise_variance;
  // Nearly repeated inputs with little noise make K singular in floating point: a little
  // jitter, grown tenfold while the factorisation fails, keeps the model usable.
  const auto jitter = jittered_cholesky(k, h_.signal_variance, 1e-4, true, f.llt);
  if (!jitter)
    throw Error("gp: the kernel matrix of " + std::to_string(data_.size()) +
                " observations is not positive definite even with jitter");
  f.jitter = *jitter;
  f.alpha = f.llt.solve(
      Eigen::Map<const Vector>(data_.targets.data(), static_cast<Eigen::Index>(data_.size())));
}

Posterior::~Posterior() = default;
Posterior::Posterior(Posterior&&) noexcept = default;
Posterior& Posterior::operator=(Posterior&&) noexcept = default;

const Hyperparameters& Posterior::hyperparameters() const {
  return h_;
}

const Data& Posterior::data() const {
  return data_;
}

std::vector<Prediction> Posterior::predict(std::span<const double> points) const {
  const Matrix z = scaled(points, data_.dims, h_);
  const Matrix k_star = cross_covariance(factor_->scaled_inputs, z, h_.signal_variance);
  const Vector mean = k_star.transpose() * factor_->alpha;
  const Matrix v = factor_->llt.matrixL().solve(k_star);
  std::vector<Prediction> out(static_cast<std::size_t>(z.rows()));
  for (Eigen::Index i = 0; i < z.rows(); ++i) {
    const double variance = h_.signal_variance - v.col(i).squaredNorm();
    out[static_cast<std::size_t>(i)] = {mean(i), std::max(variance, 1e-12 * h_.signal_variance)};
  }
  return out;
}

std::vector<double> Posterior::leave_one_out_means(std::span<const std::size_t> rows) const {
  const auto n = static_cast<Eigen::Index>(data_.size());
  Matrix unit = Matrix::Zero(n, static_cast<Eigen::Index>(rows.size()));
  for (std::size_t j = 0; j < rows.size(); ++j) {
    if (rows[j] >= data_.size()) throw Error("gp: leave-one-out row out of range");
    unit(static_cast<Eigen::Index>(rows[j]), static_cast<Eigen::Index>(j)) = 1;
  }
  // The diagonal of K^-1 at each row: the squared norm of L^-1 e_i.
  const Matrix v = factor_->llt.matrixL().solve(unit);
  std::vector<double> out(rows.size());
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const double inverse_diagonal = v.col(static_cast<Eigen::Index>(j)).squaredNorm();
    const auto i = static_cast<Eigen::Index>(rows[j]);
    out[j] = data_.targets[rows[j]] - factor_->alpha(i) / inverse_diagonal;
  }
  return out;
}

std::vector<double> Posterior::joint_sample(std::span<const double> points,
                                            std::span<const double> normals) const {
  const Matrix z = scaled(points, data_.dims, h_);
  if (static_cast<std::size_t>(z.rows()) != normals.size())
    throw Error("gp: a joint sample of " + std::to_string(z.rows()) + " points got " +
                std::to_string(normals.size()) + " normals");
  const Matrix k_star = cross_covariance(factor_->scaled_inputs, z, h_.signal_variance);
  const Vector mean = k_star.transpose() * factor_->alpha;
  const Matrix v = factor_->llt.matrixL().solve(k_star);
  const Matrix covariance = cross_covariance(z, z, h_.signal_variance) - v.transpose() * v;
  const Eigen::Map<const Vector> e(normals.data(), static_cast<Eigen::Index>(normals.size()));
  Eigen::LLT<Matrix> llt;
  const Vector draw =
      jittered_cholesky(covariance, h_.signal_variance, 1e-2, false, llt)
          ? Vector(mean + llt.matrixL() * e)
          : Vector(mean + covariance.diagonal().cwiseMax(0.0).cwiseSqrt().cwiseProduct(e));
  return {draw.data(), draw.data() + draw.size()};
}

double Posterior::log_marginal_likelihood() const {
  const auto n = static_cast<double>(data_.size());
  const Eigen::Map<const Vector> y(data_.targets.data(), static_cast<Eigen::Index>(data_.size()));
  const double fit = -0.5 * y.dot(factor_->alpha);
  const double complexity = -factor_->llt.matrixLLT().diagonal().array().log().sum();
  return fit + complexity - 0.5 * n * std::log(2 * std::numbers::pi);
}

Objective fit_objective(const Data& data, const Hyperparameters& h, LengthScalePrior prior) {
  const Posterior posterior(data, h);
  const Posterior::Factor& f = *posterior.factor_;
  const auto n = static_cast<Eigen::Index>(data.size());
  // d LML / d theta = 1/2 tr((alpha alpha^T - K^-1) dK/dtheta).
  Matrix w = f.alpha * f.alpha.transpose() - f.llt.solve(Matrix::Identity(n, n));
  const std::size_t dims = data.dims;
  const std::size_t warped = h.warped_dims.size();
  // Each warped input's derivatives in log a and log b at every observation.
  Matrix du_da(n, static_cast<Eigen::Index>(warped)), du_db(n, static_cast<Eigen::Index>(warped));
  for (std::size_t k = 0; k < warped; ++k)
    for (Eigen::Index i = 0; i < n; ++i) {
      const double x = data.inputs[static_cast<std::size_t>(i) * dims + h.warped_dims[k]];
      const auto [da, db] = warp_gradient(x, h.warp_a[k], h.warp_b[k]);
      du_da(i, static_cast<Eigen::Index>(k)) = da;
      du_db(i, static_cast<Eigen::Index>(k)) = db;
    }
  Objective out;
  out.value = posterior.log_marginal_likelihood();
  out.gradient.assign(dims + 2 * warped + 2, 0.0);
  double signal = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    signal += 0.5 * w(j, j) * h.signal_variance;
    for (Eigen::Index i = 0; i < j; ++i) {
      const Eigen::RowVectorXd delta = f.scaled_inputs.row(i) - f.scaled_inputs.row(j);
      const double s = kSqrt5 * delta.norm();
      const double e = std::exp(-s);
      signal += w(i, j) * h.signal_variance * (1.0 + s + s * s / 3.0) * e;  // both triangles
      const double common = w(i, j) * h.signal_variance * (5.0 / 3.0) * (1.0 + s) * e;
      for (std::size_t k = 0; k < dims; ++k) {
        const double dk = delta(static_cast<Eigen::Index>(k));
        out.gradient[k + 1] += common * dk * dk;
      }
      // dK/d log a = dK/d r^2 * 2 delta_k (du_i - du_j) / l_k, dK/d r^2 = -common / 2.
      for (std::size_t k = 0; k < warped; ++k) {
        const auto column = static_cast<Eigen::Index>(k);
        const std::size_t d = h.warped_dims[k];
        const double along = -common * delta(static_cast<Eigen::Index>(d)) / h.length_scales[d];
        out.gradient[dims + 1 + 2 * k] += along * (du_da(i, column) - du_da(j, column));
        out.gradient[dims + 2 + 2 * k] += along * (du_db(i, column) - du_db(j, column));
      }
    }
  }
  out.gradient[0] = signal;
  out.gradient.back() = 0.5 * w.trace() * h.noise_variance;
  const std::vector<double> theta = to_log(h);
  const Priors priors(dims, warped, prior);
  for (std::size_t j = 0; j < theta.size(); ++j) {
    double g = 0;
    out.value += priors.log_density(j, theta[j], g);
    out.gradient[j] += g;
  }
  return out;
}

Hyperparameters fit(const Data& data, const Hyperparameters& start_point,
                    const FitOptions& options) {
  Hyperparameters start = start_point;
  if (start.warped_dims.empty() && !options.warped_dims.empty()) {
    start.warped_dims = options.warped_dims;  // from the identity
    start.warp_a.assign(options.warped_dims.size(), 1.0);
    start.warp_b.assign(options.warped_dims.size(), 1.0);
  }
  check(data, start);
  std::vector<double> theta = to_log(start);
  const std::size_t count = theta.size();
  const Priors priors(data.dims, start.warped_dims.size(), options.length_prior);
  for (const auto& group : options.tied_length_scales)
    for (const std::size_t d : group) {
      if (d >= data.dims)
        throw UsageError("gp: a tied length scale of input " + std::to_string(d) + " of " +
                         std::to_string(data.dims));
      theta[d + 1] = theta[group.front() + 1];
    }
  for (std::size_t j = 0; j < count; ++j)
    theta[j] = std::clamp(theta[j], priors.of(j).low, priors.of(j).high);
  std::vector<double> step(count, 0.1), previous(count, 0.0), best_theta = theta;
  double best = -INFINITY;
  for (int it = 0; it < options.iterations; ++it) {
    Objective obj;
    try {
      obj = fit_objective(data, from_log(theta, start), options.length_prior);
    } catch (const Error&) {
      // Not factorisable here: back to the best point with smaller steps.
      theta = best_theta;
      for (double& s : step)
        s *= 0.5;
      continue;
    }
    if (obj.value > best) {
      best = obj.value;
      best_theta = theta;
    }
    // Tied length scales move as one: each gets its group's whole gradient, so equal
    // values take equal steps.
    for (const auto& group : options.tied_length_scales) {
      double sum = 0;
      for (const std::size_t d : group)
        sum += obj.gradient[d + 1];
      for (const std::size_t d : group)
        obj.gradient[d + 1] = sum;
    }
    // iRprop-: a step grows while its gradient keeps its sign and halves when it flips
    // (a flip also skips that coordinate once).
    for (std::size_t j = 0; j < count; ++j) {
      double g = obj.gradient[j];
      if (g * previous[j] > 0) {
        step[j] = std::min(step[j] * 1.2, 1.0);
      } else if (g * previous[j] < 0) {
        step[j] = std::max(step[j] * 0.5, 1e-6);
        g = 0;
      }
      const LogPrior& p = priors.of(j);
      theta[j] = std::clamp(theta[j] + (g > 0 ? step[j] : g < 0 ? -step[j] : 0.0), p.low, p.high);
      previous[j] = g;
    }
  }
  return from_log(best_theta, start);
}

std::size_t next_refit_point(std::size_t point, double growth) {
  return std::max(point + 1,
                  static_cast<std::size_t>(std::ceil(static_cast<double>(point) * growth)));
}

std::size_t refit_point(std::size_t n, double growth, std::size_t first) {
  std::size_t point = first;
  for (;;) {
    const auto next = next_refit_point(point, growth);
    if (next > n) return point;
    point = next;
  }
}

}  // namespace slurmtune::core::gp
