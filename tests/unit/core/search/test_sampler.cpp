#define BOOST_TEST_MODULE core_sampler
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <set>

#include "core/error.hpp"
#include "core/search/sampler.hpp"

using namespace slurmtune::core;

namespace {
SearchSpace example_space() {
  return SearchSpace({
      Parameter{"lr", Domain{DomainKind::LogUniform, 1e-4, 1e-1, 0, {}}},
      Parameter{
          "batch_size",
          Domain{
              DomainKind::Choice, 0, 0, 0, {ParamValue{32L}, ParamValue{64L}, ParamValue{128L}}}},
      Parameter{"hidden", Domain{DomainKind::RandInt, 16, 256, 0, {}}},
      Parameter{
          "warmup",
          Domain{DomainKind::Grid, 0, 0, 0, {ParamValue{0L}, ParamValue{2L}, ParamValue{5L}}}},
  });
}

// Fraction of the n equal strata of [0,1) hit by the first n points of coordinate 0.
double strata_covered(const UnitPointSampler& sampler, std::size_t n) {
  std::set<std::size_t> hit;
  std::vector<double> p(1);
  for (std::size_t i = 0; i < n; ++i) {
    sampler.point(i, p);
    hit.insert(static_cast<std::size_t>(p[0] * static_cast<double>(n)));
  }
  return static_cast<double>(hit.size()) / static_cast<double>(n);
}
}  // namespace

BOOST_AUTO_TEST_CASE(the_same_seed_gives_the_same_configurations) {
  for (const auto kind : {SamplerKind::Random, SamplerKind::Halton}) {
    const ConfigSampler a(example_space(), kind, 7), b(example_space(), kind, 7);
    for (std::uint64_t i = 0; i < 200; ++i)
      BOOST_REQUIRE(a.sample(i) == b.sample(i));
  }
}

BOOST_AUTO_TEST_CASE(sampling_is_a_pure_function_of_the_trial_index) {
  const ConfigSampler s(example_space(), SamplerKind::Random, 7);
  const auto later = s.sample(150);
  for (std::uint64_t i = 0; i < 150; ++i)
    s.sample(i);
  BOOST_TEST((s.sample(150) == later));
}

BOOST_AUTO_TEST_CASE(different_seeds_give_different_configurations) {
  const ConfigSampler a(example_space(), SamplerKind::Random, 7),
      b(example_space(), SamplerKind::Random, 8);
  int same = 0;
  for (std::uint64_t i = 0; i < 100; ++i)
    same += a.sample(i) == b.sample(i);
  BOOST_TEST(same == 0);
}

BOOST_AUTO_TEST_CASE(pinned_draws_hold_on_every_compiler_and_machine) {
  // Golden values: changing them breaks resuming studies written by older versions.
  const ConfigSampler s(example_space(), SamplerKind::Random, 7);
  const auto c = s.sample(0);
  BOOST_TEST(to_json(c.values[0]) == "0.09821256714677214");
  BOOST_TEST(to_json(c.values[1]) == "64");
  BOOST_TEST(to_json(c.values[2]) == "206");
  BOOST_TEST(to_json(c.values[3]) == "0");
}

BOOST_AUTO_TEST_CASE(grid_axes_cycle_through_every_point_in_turn) {
  const ConfigSampler s(example_space(), SamplerKind::Random, 1);
  BOOST_TEST(s.grid_size() == 3U);
  const std::int64_t expected[] = {0, 2, 5, 0, 2, 5};
  for (std::uint64_t i = 0; i < 6; ++i)
    BOOST_TEST(std::get<std::int64_t>(s.sample(i).values[3]) == expected[i]);
}

BOOST_AUTO_TEST_CASE(grid_sampler_enumerates_the_full_cross_product_once) {
  const SearchSpace space({
      Parameter{"a", Domain{DomainKind::Choice, 0, 0, 0, {ParamValue{1L}, ParamValue{2L}}}},
      Parameter{
          "b",
          Domain{DomainKind::Grid, 0, 0, 0, {ParamValue{"x"}, ParamValue{"y"}, ParamValue{"z"}}}},
      Parameter{"c", Domain{DomainKind::Constant, 0, 0, 0, {ParamValue{true}}}},
  });
  const ConfigSampler s(space, SamplerKind::Grid, 0);
  BOOST_TEST(s.grid_size() == 6U);
  std::set<std::string> seen;
  for (std::uint64_t i = 0; i < 6; ++i)
    seen.insert(space.to_json(s.sample(i)));
  BOOST_TEST(seen.size() == 6U);
}

BOOST_AUTO_TEST_CASE(grid_sampler_refuses_continuous_parameters) {
  BOOST_CHECK_THROW(ConfigSampler(example_space(), SamplerKind::Grid, 0), slurmtune::InputError);
}

BOOST_AUTO_TEST_CASE(every_sample_lies_inside_its_domain) {
  for (const auto kind : {SamplerKind::Random, SamplerKind::Halton}) {
    const ConfigSampler s(example_space(), kind, 3);
    for (std::uint64_t i = 0; i < 2000; ++i) {
      const auto c = s.sample(i);
      const double lr = std::get<double>(c.values[0]);
      const auto hidden = std::get<std::int64_t>(c.values[2]);
      BOOST_REQUIRE((lr >= 1e-4 && lr <= 1e-1));
      BOOST_REQUIRE((hidden >= 16 && hidden < 256));
    }
  }
}

BOOST_AUTO_TEST_CASE(halton_covers_the_space_more_evenly_than_random) {
  const HaltonPointSampler halton(3, 11);
  const RandomPointSampler random(11);
  // n independent uniform points hit about 1 - 1/e = 63 % of n strata; a
  // low-discrepancy sequence hits nearly all.
  BOOST_TEST(strata_covered(halton, 1024) > 0.95);
  BOOST_TEST(strata_covered(random, 1024) < 0.75);
}

BOOST_AUTO_TEST_CASE(halton_points_stay_in_the_unit_cube) {
  const HaltonPointSampler halton(8, 5);
  std::vector<double> p(8);
  for (std::uint64_t i = 0; i < 5000; ++i) {
    halton.point(i, p);
    for (const double x : p)
      BOOST_REQUIRE((x >= 0.0 && x < 1.0));
  }
}
