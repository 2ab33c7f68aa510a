#define BOOST_TEST_MODULE core_truncated_normal
#include <boost/test/unit_test.hpp>

#include "core/search/optuna/truncated_normal.hpp"

using namespace slurmtune::core;

// Expected values printed by Optuna 3.1 (Debian's python3-optuna) on this machine:
// optuna.samplers._tpe._truncnorm.ppf / _log_gauss_mass / logpdf / _log_ndtr and
// optuna.samplers._tpe._erf.erf. Bit-identical, not approximately equal: TPE's
// suggestions depend on every last bit of these.

BOOST_AUTO_TEST_CASE(ppf_and_gauss_mass_equal_optunas_bit_for_bit) {
  struct Case {
    double q, a, b, ppf, log_mass;
  };
  const Case cases[] = {
      {0.3, -1.5, 2.0, -0.41262688225521305, -0.09382435073399},
      {0.9, 0.5, 3.0, 1.8512240709778358, -1.1802965106326773},
      {0.01, -30.0, -25.0, -25.183244039412372, -316.6394080080202},
      {0.5, -0.2, 0.1, -0.049440657406039465, -2.1278963696652227},
      {0.999, 2.0, 8.0, 4.077613787546333, -3.7831843336820588},
      {0.42, -7.0, -1.0, -1.5013292880899893, -1.84102164501733},
  };
  for (const auto& c : cases) {
    BOOST_TEST(tpe::ppf(c.q, c.a, c.b) == c.ppf);
    BOOST_TEST(tpe::log_gauss_mass(c.a, c.b) == c.log_mass);
  }
}

BOOST_AUTO_TEST_CASE(erf_and_log_ndtr_equal_optunas_bit_for_bit) {
  struct Case {
    double x, erf, log_ndtr_of_5x;
  };
  const Case cases[] = {
      {-3.0, -0.9999779095030014, -116.13138484571166},
      {-1.1, -0.8802050695740817, -17.77937635262526},
      {-0.5, -0.5204998778130465, -5.08164827727869},
      {1e-09, 1.1283791670955127e-09, -0.6931471765705225},
      {0.3, 0.3286267594591274, -0.069143455612234},
      {0.9, 0.7969082124228322, -3.397678896843115e-06},
      {2.0, 0.9953222650189527, -7.619853024160593e-24},
      {4.0, 0.9999999845827421, -2.7536241186063314e-89},
      {7.0, 1.0, -1.1249107064725534e-268},
  };
  for (const auto& c : cases) {
    BOOST_TEST(tpe::erf_polynomial(c.x) == c.erf);
    BOOST_TEST(tpe::log_ndtr(c.x * 5) == c.log_ndtr_of_5x);
  }
  BOOST_TEST(tpe::logpdf(0.7, -1.0, 2.5, 0.2, 0.8) == -0.9340892393341255);
}
