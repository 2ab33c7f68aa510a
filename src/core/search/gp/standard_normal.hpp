#pragma once
// The standard normal density and distribution function: MOBSTER's expected improvement
// and the copula's map back to the targets share them.
#include <cmath>
#include <numbers>

namespace slurmtune::core::gp {

inline double normal_pdf(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
}

inline double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::numbers::sqrt2);
}

}  // namespace slurmtune::core::gp
