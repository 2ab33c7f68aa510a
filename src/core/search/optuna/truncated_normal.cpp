#include "core/search/optuna/truncated_normal.hpp"

#include <cfloat>
#include <cmath>
#include <limits>
#include <numbers>

namespace slurmtune::core::tpe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Coefficients of FreeBSD's s_erf.c, as Optuna's _erf.py spells them.
constexpr double erx = 8.45062911510467529297e-01, efx = 1.28379167095512586316e-01;
constexpr double pp0 = 1.28379167095512558561e-01, pp1 = -3.25042107247001499370e-01,
                 pp2 = -2.84817495755985104766e-02, pp3 = -5.77027029648944159157e-03,
                 pp4 = -2.37630166566501626084e-05;
constexpr double qq1 = 3.97917223959155352819e-01, qq2 = 6.50222499887672944485e-02,
                 qq3 = 5.08130628187576562776e-03, qq4 = 1.32494738004321644526e-04,
                 qq5 = -3.96022827877536812320e-06;
constexpr double pa0 = -2.36211856075265944077e-03, pa1 = 4.14856118683748331666e-01,
                 pa2 = -3.72207876035701323847e-01, pa3 = 3.18346619901161753674e-01,
                 pa4 = -1.10894694282396677476e-01, pa5 = 3.54783043256182359371e-02,
                 pa6 = -2.16637559486879084300e-03;
constexpr double qa1 = 1.06420880400844228286e-01, qa2 = 5.40397917702171048937e-01,
                 qa3 = 7.18286544141962662868e-02, qa4 = 1.26171219808761642112e-01,
                 qa5 = 1.36370839120290507362e-02, qa6 = 1.19844998467991074170e-02;
constexpr double ra0 = -9.86494403484714822705e-03, ra1 = -6.93858572707181764372e-01,
                 ra2 = -1.05586262253232909814e01, ra3 = -6.23753324503260060396e01,
                 ra4 = -1.62396669462573470355e02, ra5 = -1.84605092906711035994e02,
                 ra6 = -8.12874355063065934246e01, ra7 = -9.81432934416914548592e00;
constexpr double sa1 = 1.96512716674392571292e01, sa2 = 1.37657754143519042600e02,
                 sa3 = 4.34565877475229228821e02, sa4 = 6.45387271733267880336e02,
                 sa5 = 4.29008140027567833386e02, sa6 = 1.08635005541779435134e02,
                 sa7 = 6.57024977031928170135e00, sa8 = -6.04244152148580987438e-02;
constexpr double rb0 = -9.86494292470009928597e-03, rb1 = -7.99283237680523006574e-01,
                 rb2 = -1.77579549177547519889e01, rb3 = -1.60636384855821916062e02,
                 rb4 = -6.37566443368389627722e02, rb5 = -1.02509513161107724954e03,
                 rb6 = -4.83519191608651397019e02;
constexpr double sb1 = 3.03380607434824582924e01, sb2 = 3.25792512996573918826e02,
                 sb3 = 1.53672958608443695994e03, sb4 = 3.19985821950859553908e03,
                 sb5 = 2.55305040643316442583e03, sb6 = 4.74528541206955367215e02,
                 sb7 = -2.24409524465858183362e01;

double sign(double x) {
  return x > 0 ? 1.0 : (x < 0 ? -1.0 : x);
}  // numpy's np.sign

const double kSqrt2 = std::sqrt(2.0);                                // Python's 2**0.5
const double kNormLogC = std::log(std::sqrt(2 * std::numbers::pi));  // _norm_pdf_logC

// Python's math.erf/erfc are libm's; _ndtr_single picks the accurate one per region.
double ndtr_single(double a) {
  const double x = a / kSqrt2;
  if (x < -1 / kSqrt2) return 0.5 * std::erfc(-x);
  if (x < 1 / kSqrt2) return 0.5 + 0.5 * std::erf(x);
  return 1.0 - 0.5 * std::erfc(x);
}

double log_diff(double log_p, double log_q) {
  return log_p + std::log1p(-std::exp(log_q - log_p));
}

double mass_case_left(double a, double b) {
  return log_diff(log_ndtr(b), log_ndtr(a));
}

double ndtri_exp(double y) {
  // _bisect(_log_ndtr_single, -100, +100, y): 100 halvings.
  double a = -100, b = 100, m = 0;
  if (log_ndtr(a) > y) std::swap(a, b);
  for (int i = 0; i < 100; ++i) {
    m = (a + b) / 2;
    if (log_ndtr(m) < y)
      a = m;
    else
      b = m;
  }
  return m;
}

}  // namespace

double erf_polynomial(double x) {
  if (std::isnan(x)) return kNaN;
  const double a = std::abs(x);
  if (a < 0x1p-28) return x + efx * x;
  if (a < 0.84375) {
    const double z = x * x;
    const double r = pp0 + z * (pp1 + z * (pp2 + z * (pp3 + z * pp4)));
    const double s = 1 + z * (qq1 + z * (qq2 + z * (qq3 + z * (qq4 + z * qq5))));
    const double y = r / s;
    return x + x * y;
  }
  if (a < 1.25) {
    const double s = std::abs(x) - 1;
    const double P = pa0 + s * (pa1 + s * (pa2 + s * (pa3 + s * (pa4 + s * (pa5 + s * pa6)))));
    const double Q = 1 + s * (qa1 + s * (qa2 + s * (qa3 + s * (qa4 + s * (qa5 + s * qa6)))));
    return (erx + P / Q) * sign(x);
  }
  if (a >= 6) return sign(x);
  const double s = 1 / (a * a);
  double R, S;
  if (a < 1 / 0.35) {
    R = ra0 + s * (ra1 + s * (ra2 + s * (ra3 + s * (ra4 + s * (ra5 + s * (ra6 + s * ra7))))));
    S = 1 +
        s * (sa1 + s * (sa2 + s * (sa3 + s * (sa4 + s * (sa5 + s * (sa6 + s * (sa7 + s * sa8)))))));
  } else {
    R = rb0 + s * (rb1 + s * (rb2 + s * (rb3 + s * (rb4 + s * (rb5 + s * rb6)))));
    S = 1 + s * (sb1 + s * (sb2 + s * (sb3 + s * (sb4 + s * (sb5 + s * (sb6 + s * sb7))))));
  }
  const double r = std::exp(-a * a - 0.5625) * std::exp(R / S);
  return (1 - r / a) * sign(x);
}

double ndtr(double a) {
  return 0.5 + 0.5 * erf_polynomial(a / kSqrt2);
}

double log_ndtr(double a) {
  if (a > 6) return -ndtr_single(-a);
  if (a > -20) return std::log(ndtr_single(a));
  const double log_lhs = -0.5 * (a * a) - std::log(-a) - 0.5 * std::log(2 * std::numbers::pi);
  double last_total = 0, right_hand_side = 1, numerator = 1, denom_factor = 1;
  const double denom_cons = 1 / (a * a);
  double sign_ = 1;
  int i = 0;
  while (std::abs(last_total - right_hand_side) > DBL_EPSILON) {
    ++i;
    last_total = right_hand_side;
    sign_ = -sign_;
    denom_factor *= denom_cons;
    numerator *= 2 * i - 1;
    right_hand_side += sign_ * numerator * denom_factor;
  }
  return log_lhs + std::log(right_hand_side);
}

double logaddexp(double x, double y) {
  if (x == y) return x + std::numbers::ln2;
  const double tmp = x - y;
  if (tmp > 0) return x + std::log1p(std::exp(-tmp));
  if (tmp <= 0) return y + std::log1p(std::exp(tmp));
  return tmp;  // NaN
}

double log_gauss_mass(double a, double b) {
  if (b <= 0) return mass_case_left(a, b);
  if (a > 0) return mass_case_left(-b, -a);
  return std::log1p(-ndtr(a) - ndtr(-b));
}

double ppf(double q, double a, double b) {
  if (a == b) return kNaN;
  if (q == 0) return a;
  if (q == 1) return b;
  if (a < 0) return ndtri_exp(logaddexp(log_ndtr(a), std::log(q) + log_gauss_mass(a, b)));
  return -ndtri_exp(logaddexp(log_ndtr(-b), std::log1p(-q) + log_gauss_mass(a, b)));
}

double from_quantile(double q, double a, double b, double loc, double scale) {
  return ppf(q, a, b) * scale + loc;
}

double logpdf(double x, double a, double b, double loc, double scale) {
  x = (x - loc) / scale;
  if (a == b) return kNaN;
  if (x < a || b < x) return -kInf;
  return -(x * x) / 2.0 - kNormLogC - log_gauss_mass(a, b);
}

}  // namespace slurmtune::core::tpe
