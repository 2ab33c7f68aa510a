#define BOOST_TEST_MODULE core_search_space
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/space/search_space.hpp"

using namespace slurmtune::core;

namespace {
Domain ranged(DomainKind kind, double low, double high, double q = 0) {
  return Domain{kind, low, high, q, {}};
}
const double kUnits[] = {0.0, 1e-9, 0.1, 0.25, 0.5, 0.75, 0.999999, std::nextafter(1.0, 0.0)};
}  // namespace

BOOST_AUTO_TEST_CASE(uniform_maps_the_unit_interval_linearly) {
  const auto d = ranged(DomainKind::Uniform, -2, 6);
  BOOST_TEST(std::get<double>(d.from_unit(0.0)) == -2.0);
  BOOST_TEST(std::get<double>(d.from_unit(0.5)) == 2.0);
  BOOST_TEST(std::get<double>(d.from_unit(0.25)) == 0.0);
}

BOOST_AUTO_TEST_CASE(loguniform_maps_the_unit_interval_geometrically) {
  const auto d = ranged(DomainKind::LogUniform, 1e-4, 1e-1);
  BOOST_TEST(std::get<double>(d.from_unit(0.0)) == 1e-4, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(std::get<double>(d.from_unit(1.0 / 3)) == 1e-3, boost::test_tools::tolerance(1e-9));
  for (const double u : kUnits) {
    const double v = std::get<double>(d.from_unit(u));
    BOOST_TEST((v >= 1e-4 && v <= 1e-1));
  }
}

BOOST_AUTO_TEST_CASE(quantized_reals_are_multiples_of_q) {
  const auto d = ranged(DomainKind::QUniform, 0, 1, 0.25);
  for (const double u : kUnits) {
    const double v = std::get<double>(d.from_unit(u));
    BOOST_TEST(std::fmod(v, 0.25) == 0.0);
  }
  // Ties round to even, like numpy.round: 0.375 / 0.25 = 1.5 -> 2.
  BOOST_TEST(std::get<double>(d.from_unit(0.375)) == 0.5);
}

// Optuna's suggest_float(low, high, step=q): low, low+q, ... high, each as often.
BOOST_AUTO_TEST_CASE(stepped_floats_start_at_low_and_reach_high) {
  const auto d = ranged(DomainKind::SteppedUniform, 0.1, 0.7, 0.2);
  BOOST_TEST(d.steps() == 3U);
  BOOST_TEST(!d.problem());
  std::map<double, int> seen;
  for (int i = 0; i < 400; ++i)
    ++seen[std::get<double>(d.from_unit(i / 400.0))];
  // 3 * 0.2 + 0.1 rounds past 0.7: the last value is clipped to high, as Optuna clips.
  BOOST_TEST((seen == std::map<double, int>{
                          {0.1, 100}, {0.2 + 0.1, 100}, {2 * 0.2 + 0.1, 100}, {0.7, 100}}));
  BOOST_TEST(std::get<double>(d.from_unit(std::nextafter(1.0, 0.0))) == 0.7);
  BOOST_TEST(std::get<double>(d.from_number(0.33)) == 0.2 + 0.1);
  BOOST_TEST(std::get<double>(d.from_number(-5)) == 0.1);
  BOOST_TEST(std::get<double>(d.from_number(5)) == 0.7);
  BOOST_TEST(d.to_unit(ParamValue{0.7}) == 0.875);
  BOOST_TEST(d.admits(ParamValue{0.5}));
  BOOST_TEST(d.admits(ParamValue{0.7}));
  BOOST_TEST(!d.admits(ParamValue{0.4}));  // between two steps
  BOOST_TEST(!d.admits(ParamValue{0.9}));
  BOOST_TEST(d.describe() == "uniform [0.1, 0.7] step 0.2");
}

BOOST_AUTO_TEST_CASE(a_step_must_divide_the_range) {
  const auto why = ranged(DomainKind::SteppedUniform, 0, 1, 0.3).problem();
  BOOST_REQUIRE(why);
  BOOST_TEST(*why ==
             "has a step of 0.3 that does not divide high - low (1); its values start at "
             "low, so make high 0.9 or 1.2");
  BOOST_TEST(*ranged(DomainKind::SteppedUniform, 0, 1, 0).problem() ==
             "needs a positive, finite step");
  BOOST_TEST(!ranged(DomainKind::SteppedUniform, -0.4, 0.8, 0.1).problem());
}

BOOST_AUTO_TEST_CASE(randint_excludes_the_upper_bound_and_reaches_every_integer) {
  const auto d = ranged(DomainKind::RandInt, 16, 20);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 1000; ++i)
    seen.insert(std::get<std::int64_t>(d.from_unit(i / 1000.0)));
  BOOST_TEST((seen == std::set<std::int64_t>{16, 17, 18, 19}));
  BOOST_TEST(std::get<std::int64_t>(d.from_unit(std::nextafter(1.0, 0.0))) == 19);
}

BOOST_AUTO_TEST_CASE(qrandint_includes_the_upper_bound_in_steps_of_q) {
  const auto d = ranged(DomainKind::QRandInt, 0, 10, 5);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 300; ++i)
    seen.insert(std::get<std::int64_t>(d.from_unit(i / 300.0)));
  BOOST_TEST((seen == std::set<std::int64_t>{0, 5, 10}));
}

BOOST_AUTO_TEST_CASE(lograndint_stays_within_its_bounds) {
  const auto d = ranged(DomainKind::LogRandInt, 1, 1000);
  for (const double u : kUnits) {
    const auto v = std::get<std::int64_t>(d.from_unit(u));
    BOOST_TEST((v >= 1 && v < 1000));
  }
}

BOOST_AUTO_TEST_CASE(choice_picks_every_value_with_equal_share) {
  const Domain d{
      DomainKind::Choice, 0, 0, 0, {ParamValue{"sgd"}, ParamValue{"adam"}, ParamValue{true}}};
  BOOST_TEST(std::get<std::string>(d.from_unit(0.1)) == "sgd");
  BOOST_TEST(std::get<std::string>(d.from_unit(0.5)) == "adam");
  BOOST_TEST(std::get<bool>(d.from_unit(0.9)));
  BOOST_TEST(d.to_unit(ParamValue{"adam"}) == 0.5);
}

BOOST_AUTO_TEST_CASE(to_unit_inverts_from_unit_for_numeric_domains) {
  for (const auto& d :
       {ranged(DomainKind::Uniform, -1, 1), ranged(DomainKind::LogUniform, 1e-3, 10)}) {
    for (const double u : {0.0, 0.3, 0.8})
      BOOST_TEST(d.to_unit(d.from_unit(u)) == u, boost::test_tools::tolerance(1e-9));
  }
}

BOOST_AUTO_TEST_CASE(impossible_domains_explain_the_fix) {
  BOOST_TEST(ranged(DomainKind::Uniform, 1, 1).problem()->find("low (1.0) >= high (1.0)") !=
             std::string::npos);
  BOOST_TEST(ranged(DomainKind::LogUniform, 0, 1).problem()->find("not positive") !=
             std::string::npos);
  BOOST_TEST(ranged(DomainKind::QUniform, 0, 1, 0).problem()->find("quantum") != std::string::npos);
  BOOST_TEST(ranged(DomainKind::RandInt, 0.5, 3).problem()->find("integer bounds") !=
             std::string::npos);
  BOOST_TEST(
      (Domain{DomainKind::Choice, 0, 0, 0, {}}.problem()->find("empty") != std::string::npos));
  BOOST_TEST(!ranged(DomainKind::Uniform, 0, 1).problem());
  BOOST_CHECK_THROW(SearchSpace({Parameter{"x", ranged(DomainKind::Uniform, 2, 1)}}),
                    slurmtune::InputError);
}

BOOST_AUTO_TEST_CASE(grid_size_multiplies_grid_axes_only) {
  const SearchSpace space({
      Parameter{
          "a", Domain{DomainKind::Grid, 0, 0, 0, {ParamValue{1L}, ParamValue{2L}, ParamValue{3L}}}},
      Parameter{"b", ranged(DomainKind::Uniform, 0, 1)},
      Parameter{"c", Domain{DomainKind::Grid, 0, 0, 0, {ParamValue{"x"}, ParamValue{"y"}}}},
      Parameter{"d", Domain{DomainKind::Constant, 0, 0, 0, {ParamValue{0.5}}}},
  });
  BOOST_TEST(space.grid_size() == 6U);
  BOOST_TEST(space.sampled_dimensions() == 1U);
  BOOST_TEST(*space.index_of("c") == 2U);
  BOOST_TEST(!space.index_of("zz"));
}
