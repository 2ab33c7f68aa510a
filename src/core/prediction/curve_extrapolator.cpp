#include "core/prediction/curve_extrapolator.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <numeric>
#include <vector>

#include "core/random.hpp"

namespace slurmtune::core {
namespace {

constexpr std::array kFamilies = {CurveFamily::Pow3, CurveFamily::Exp3, CurveFamily::Ilog2,
                                  CurveFamily::LogLinear};
constexpr int kGridPoints = 16;     // coarse scan of the shape parameter (log scale)
constexpr int kGoldenSteps = 16;    // then a golden-section refinement around the best
constexpr double kWildness = 10.0;  // a forecast this many observed spans away is refused

bool has_shape(CurveFamily f) {
  return f == CurveFamily::Pow3 || f == CurveFamily::Exp3;
}

// Where theta is searched (log scale): pow3's exponent, exp3's rate per last step.
std::pair<double, double> shape_range(CurveFamily f) {
  return f == CurveFamily::Pow3 ? std::pair{0.01, 4.0} : std::pair{0.05, 20.0};
}

// g_theta(x); `scale` is the last observed step (exp3's unit of steps).
double basis(CurveFamily f, double theta, double x, double scale) {
  switch (f) {
    case CurveFamily::Pow3:
      return std::pow(x, -theta);
    case CurveFamily::Exp3:
      return std::exp(-theta * x / scale);
    case CurveFamily::Ilog2:
      return 1.0 / std::log(x + 1.0);
    case CurveFamily::LogLinear:
      return std::log(x);
  }
  return NAN;
}

struct Curve {
  std::vector<double> x, y;
  double scale = 1;  // the last step of the whole curve (the same for every sub-fit)
};

struct Fit {
  double c = NAN, a = NAN, theta = 0, sse = INFINITY;
  bool ok() const { return std::isfinite(sse); }
};

// (c, a) for a fixed theta: linear least squares on the columns [1, g(x)], solved from
// its 2x2 normal equations (one pass over the points, nothing allocated: this runs some
// thousand times per prediction).
Fit fit_for_shape(CurveFamily f, double theta, const Curve& curve, std::size_t n) {
  Eigen::Matrix2d normal = Eigen::Matrix2d::Zero();
  Eigen::Vector2d moment = Eigen::Vector2d::Zero();
  double yy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Vector2d row(1.0, basis(f, theta, curve.x[i], curve.scale));
    normal.noalias() += row * row.transpose();
    moment += row * curve.y[i];
    yy += curve.y[i] * curve.y[i];
  }
  if (!normal.allFinite()) return {};
  const Eigen::Vector2d coef = normal.ldlt().solve(moment);
  // sum (y - row.coef)^2 from the same sums; rounding can take it just below zero.
  const double sse = std::max(0.0, yy - 2 * coef.dot(moment) + coef.dot(normal * coef));
  if (!coef.allFinite() || !std::isfinite(sse)) return {};
  return Fit{coef(0), coef(1), theta, sse};
}

// The least-squares fit of family f to the first n points: for shape families a scan of
// log(theta) and a golden-section search around its best point.
Fit fit_family(CurveFamily f, const Curve& curve, std::size_t n) {
  if (!has_shape(f)) return fit_for_shape(f, 0.0, curve, n);
  const auto [low, high] = shape_range(f);
  const double lo = std::log(low), hi = std::log(high);
  const auto at = [&](double log_theta) { return fit_for_shape(f, std::exp(log_theta), curve, n); };
  const double step = (hi - lo) / (kGridPoints - 1);
  Fit best;
  int best_index = 0;
  for (int i = 0; i < kGridPoints; ++i) {
    const Fit fit = at(lo + step * i);
    if (fit.sse < best.sse) best = fit, best_index = i;
  }
  if (!best.ok()) return best;
  double a = lo + step * std::max(0, best_index - 1);
  double b = lo + step * std::min(kGridPoints - 1, best_index + 1);
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  double c = b - ratio * (b - a), d = a + ratio * (b - a);
  Fit fc = at(c), fd = at(d);
  for (int i = 0; i < kGoldenSteps; ++i) {
    if (fc.sse <= fd.sse) {
      b = d, d = c, fd = fc;
      c = b - ratio * (b - a), fc = at(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + ratio * (b - a), fd = at(d);
    }
  }
  for (const Fit& fit : {fc, fd})
    if (fit.sse < best.sse) best = fit;
  return best;
}

double value_at(CurveFamily f, const Fit& fit, double x, double scale) {
  return fit.c + fit.a * basis(f, fit.theta, x, scale);
}

// How each family forecasts: fitted without the last third of the curve, its mean
// squared error on that third, and how far that forecast reached (steps past the last
// point it was fitted to). Too short a curve to hold a third out (fewer than 3 points
// left to fit): no errors.
struct HoldOut {
  std::array<double, kCurveFamilies> error{};
  double reach = 0;
  bool measured = false;
};

HoldOut hold_out(const Curve& curve, const std::array<bool, kCurveFamilies>& usable) {
  const std::size_t n = curve.x.size();
  const std::size_t held = std::max<std::size_t>(1, n / 3);
  HoldOut out;
  out.error.fill(INFINITY);
  if (n - held < 3) return out;
  out.measured = true;
  out.reach = curve.x[n - 1] - curve.x[n - held - 1];
  for (std::size_t k = 0; k < kFamilies.size(); ++k) {
    if (!usable[k]) continue;
    const Fit fit = fit_family(kFamilies[k], curve, n - held);
    if (!fit.ok()) continue;
    double sum = 0;
    for (std::size_t i = n - held; i < n; ++i) {
      const double miss = value_at(kFamilies[k], fit, curve.x[i], curve.scale) - curve.y[i];
      sum += miss * miss;
    }
    out.error[k] = sum / static_cast<double>(held);
  }
  return out;
}

// The weights: a family whose hold-out error is r times the best one's weighs
// exp(-(r - 1) / kTemper) before normalising, so that a few held-out points cannot hand
// one family all the weight unless the others miss by far. Without a hold-out (a short
// curve) every usable family weighs the same.
std::array<double, kCurveFamilies> family_weights(const HoldOut& held, const Curve& curve,
                                                  const std::array<bool, kCurveFamilies>& usable) {
  constexpr double kTemper = 3.0;
  const double best = *std::min_element(held.error.begin(), held.error.end());
  const auto [min_y, max_y] = std::minmax_element(curve.y.begin(), curve.y.end());
  const double floor = 1e-12 * std::max(1.0, (*max_y - *min_y) * (*max_y - *min_y));
  std::array<double, kCurveFamilies> weights{};
  for (std::size_t k = 0; k < kFamilies.size(); ++k) {
    if (!usable[k]) continue;
    if (!std::isfinite(best))
      weights[k] = 1.0;
    else if (std::isfinite(held.error[k]))
      weights[k] = std::exp(-((held.error[k] + floor) / (best + floor) - 1) / kTemper);
  }
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  for (double& w : weights)
    w = total > 0 ? w / total : 0.0;
  return weights;
}

// The bootstrap's seed: the curve and the target, bit for bit.
std::uint64_t seed_of(const Curve& curve, double target) {
  std::uint64_t h = mix64(std::bit_cast<std::uint64_t>(target));
  for (std::size_t i = 0; i < curve.x.size(); ++i)
    h = mix64(h ^ mix64(std::bit_cast<std::uint64_t>(curve.x[i]) ^
                        (std::bit_cast<std::uint64_t>(curve.y[i]) << 1)));
  return h;
}

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (at - static_cast<double>(below)) * (values[above] - values[below]);
}

}  // namespace

std::string_view to_string(CurveFamily family) {
  static constexpr std::array<std::string_view, kCurveFamilies> names = {"pow3", "exp3", "ilog2",
                                                                         "log-linear"};
  return names[static_cast<std::size_t>(family)];
}

std::optional<CurvePrediction> CurveExtrapolator::predict(std::span<const ReportedPoint> points,
                                                          double target_step) const {
  // Positive, increasing steps with finite values; a repeated step keeps its first value.
  Curve curve;
  for (const ReportedPoint& p : points) {
    if (!(p.step > 0) || !std::isfinite(p.value) || !std::isfinite(p.step)) continue;
    if (!curve.x.empty() && p.step <= curve.x.back()) continue;
    curve.x.push_back(p.step);
    curve.y.push_back(p.value);
  }
  const std::size_t n = curve.x.size();
  if (n < std::max<std::size_t>(options_.min_points, 3) || !std::isfinite(target_step)) return {};
  curve.scale = curve.x.back();
  const double target = std::max(target_step, curve.scale);
  const auto [min_y, max_y] = std::minmax_element(curve.y.begin(), curve.y.end());
  const double span = std::max(*max_y - *min_y, 1e-12 * std::max(1.0, std::abs(*max_y)));

  // Full fits; a family whose forecast is not finite or wildly off the observed range
  // takes no part.
  std::array<Fit, kCurveFamilies> fits;
  std::array<double, kCurveFamilies> forecast{};
  std::array<bool, kCurveFamilies> usable{};
  for (std::size_t k = 0; k < kFamilies.size(); ++k) {
    fits[k] = fit_family(kFamilies[k], curve, n);
    forecast[k] = fits[k].ok() ? value_at(kFamilies[k], fits[k], target, curve.scale) : NAN;
    usable[k] = std::isfinite(forecast[k]) && forecast[k] > *min_y - kWildness * span &&
                forecast[k] < *max_y + kWildness * span;
  }
  if (std::none_of(usable.begin(), usable.end(), [](bool u) { return u; })) return {};
  CurvePrediction out;
  const HoldOut held = hold_out(curve, usable);
  out.weights = family_weights(held, curve, usable);
  for (std::size_t k = 0; k < kFamilies.size(); ++k)
    if (out.weights[k] > 0) out.mean += out.weights[k] * forecast[k];

  // Residual bootstrap: draw b picks a family by its weight (stratified over the draws),
  // resamples that family's residuals onto its fitted curve, refits, and adds a forecast
  // error as large as the family's hold-out error, grown with the square root of how
  // much further this forecast reaches than the hold-out one did.
  const double reach = held.measured && held.reach > 0
                           ? std::clamp(std::sqrt((target - curve.scale) / held.reach), 1.0, 10.0)
                           : 1.0;
  std::vector<double> draws;
  Xoshiro256 rng(seed_of(curve, target));
  Curve resampled = curve;
  for (std::size_t b = 0; b < options_.bootstrap; ++b) {
    const double u = (static_cast<double>(b) + 0.5) / static_cast<double>(options_.bootstrap);
    std::size_t k = 0;
    for (double cumulative = out.weights[0]; cumulative < u && k + 1 < kFamilies.size();)
      cumulative += out.weights[++k];
    while (out.weights[k] == 0 && k > 0)
      --k;
    const CurveFamily f = kFamilies[k];
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = rng.below(n);
      const double residual = curve.y[j] - value_at(f, fits[k], curve.x[j], curve.scale);
      resampled.y[i] = value_at(f, fits[k], curve.x[i], curve.scale) + residual;
    }
    const Fit refit = fit_family(f, resampled, n);
    // A standard normal by Box-Muller from the same stream.
    const double u1 = 1.0 - rng.uniform01(), u2 = rng.uniform01();
    const double normal = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    const double forecast_error =
        std::isfinite(held.error[k]) ? std::sqrt(held.error[k]) * reach * normal : 0.0;
    const double value =
        refit.ok() ? value_at(f, refit, target, curve.scale) + forecast_error : NAN;
    if (std::isfinite(value)) draws.push_back(value);
  }
  out.lower = out.upper = out.mean;
  if (!draws.empty()) {
    out.lower = std::min(out.mean, quantile(draws, options_.low_quantile));
    out.upper = std::max(out.mean, quantile(draws, options_.high_quantile));
  }
  return out;
}

}  // namespace slurmtune::core
