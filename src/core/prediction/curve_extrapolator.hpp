#pragma once
// Learning-curve extrapolation (issue #26): where a trial's curve is going, from the
// reports so far. A cheap, deterministic version of Domhan, Springenberg and Hutter's
// parametric ensemble (IJCAI 2015): each family below is fitted by least squares, the
// families are weighted by how well each, fitted without the last third of the curve,
// forecasts that third, and the interval comes from a residual bootstrap whose draws
// pick a family by its weight and add that family's hold-out forecast error (grown with
// how much further the forecast reaches). The same curve and target always give the same
// prediction (the bootstrap's stream is seeded by the curve), so replay and resume
// decide identically. About 0.1 ms for a 9-report curve and 3.5 ms for 243 reports
// (doc/performance.md): far less than a training step.
//
// Every family is `value = c + a * g_theta(step)`: linear in (c, a) once the shape
// parameter theta is fixed, so each fit is a one-dimensional search over theta with a
// linear least-squares solve (Eigen) at every point of it.
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace slurmtune::core {

/// One report of a curve. (Not core::CurvePoint, a recorded table's point with its
/// duration: one name for two layouts in one namespace broke the one-definition rule.)
struct ReportedPoint {
  double step = 0;
  double value = 0;
  template <class Archive>  // a snapshot (core/state_archive.hpp)
  void serialize(Archive& archive) {
    archive(step, value);
  }
};

/// The parametric families: pow3 `c + a*x^-t`, exp3 `c + a*exp(-t*x/X)` (X the last
/// observed step), ilog2 `c + a/log(x+1)`, log-linear `c + a*log(x)`.
enum class CurveFamily { Pow3, Exp3, Ilog2, LogLinear };
inline constexpr std::size_t kCurveFamilies = 4;
std::string_view to_string(CurveFamily family);

/// A prediction of the value at a target step.
struct CurvePrediction {
  double mean = 0;   ///< the weighted families' value at the target
  double lower = 0;  ///< the bootstrap's low quantile (Options::low_quantile)
  double upper = 0;  ///< its high quantile
  std::array<double, kCurveFamilies> weights{};  ///< per CurveFamily, summing to 1
};

class CurveExtrapolator {
 public:
  struct Options {
    std::size_t min_points = 3;  ///< fewer reports: no prediction
    std::size_t bootstrap = 32;  ///< refits for the interval
    double low_quantile = 0.1;   ///< the interval's ends
    double high_quantile = 0.9;
  };

  CurveExtrapolator() = default;
  explicit CurveExtrapolator(Options options) : options_(options) {}

  /// The value at `target_step` (at or past the last report) from the reports in
  /// `curve` (increasing steps, finite values), or nullopt with fewer than min_points
  /// distinct steps.
  std::optional<CurvePrediction> predict(std::span<const ReportedPoint> curve,
                                         double target_step) const;

 private:
  Options options_;
};

}  // namespace slurmtune::core
