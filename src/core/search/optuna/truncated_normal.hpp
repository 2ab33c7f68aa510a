#pragma once
// The truncated normal distribution exactly as Optuna 3.1's TPE computes it
// (optuna/samplers/_tpe/_truncnorm.py and _erf.py): its own polynomial erf for the
// vectorised normal CDF, libm's erf/erfc for the scalar one, an asymptotic series for
// the far left tail, and a 100-step bisection for the inverse. Reproducing the same
// operations in the same order is what lets slurmtune's TPE suggest what Optuna's does.
// Arguments follow scipy.stats.truncnorm: bounds a, b in standard units of (loc, scale).
namespace slurmtune::core::tpe {

/// Optuna's vectorised erf (FreeBSD's s_erf.c polynomials evaluated with numpy).
double erf_polynomial(double x);
/// Φ(a) as Optuna's vectorised `_ndtr` (via erf_polynomial).
double ndtr(double a);
/// log Φ(a) as Optuna's `_log_ndtr_single` (libm erf/erfc, a series below -20).
double log_ndtr(double a);
/// log of the standard normal mass in [a, b].
double log_gauss_mass(double a, double b);
/// Inverse CDF of the standard normal truncated to [a, b] at quantile q.
double ppf(double q, double a, double b);
/// One draw: Optuna's `rvs` turns a uniform quantile (`random_state.uniform(0, 1)`)
/// into ppf(q, a, b) * scale + loc.
double from_quantile(double q, double a, double b, double loc, double scale);
/// Log density at x of the normal (loc, scale) truncated to standard bounds [a, b].
double logpdf(double x, double a, double b, double loc, double scale);
/// numpy's logaddexp.
double logaddexp(double x, double y);

}  // namespace slurmtune::core::tpe
