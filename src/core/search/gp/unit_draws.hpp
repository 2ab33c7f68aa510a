#pragma once
// Configurations drawn in unit coordinates (a number's position in its domain, log
// domains in log space): what MOBSTER's candidates and its prior region (prior_region.hpp)
// are made of.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/random.hpp"
#include "core/search/gp/startup_design.hpp"
#include "core/space/search_space.hpp"
#include "core/trial_id.hpp"

namespace slurmtune::core::gp {

inline double standard_normal(Xoshiro256& rng) {
  // Box-Muller; 1 - u keeps the logarithm finite.
  const double u = 1.0 - rng.uniform01();
  const double v = rng.uniform01();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2 * std::numbers::pi * v);
}

inline double below_one(double u) {
  return std::clamp(u, 0.0, std::nextafter(1.0, 0.0));
}

// A perturbed unit coordinate folded back into [0, 1] at the bound it crossed. Clamping
// put every overshoot exactly on the bound: an atom there that the acquisition kept taking
// (issue #43, item 3; doc/performance/search-quality.md#suggestions-at-a-bound-issue-43-item-3).
inline double folded_into_unit(double u) {
  u = std::fmod(std::fabs(u), 2.0);
  return u > 1.0 ? 2.0 - u : u;
}

// The value at unit coordinate u, kept inside the bounds: a q-grid need not fit them
// (qloguniform [1, 100] by 5 rounds 1 to 0).
inline ParamValue value_at(const Domain& d, double u) {
  const ParamValue v = d.from_unit(below_one(u));
  return d.admits(v) ? v : d.from_number(as_number(v));
}

// A configuration from unit coordinates, one taken from `next_unit` per sampled parameter.
template <class NextUnit>
Configuration configuration_from(const SearchSpace& space, NextUnit next_unit) {
  Configuration config;
  for (const auto& p : space.parameters())
    config.values.push_back(p.domain.is_sampled() ? value_at(p.domain, next_unit())
                                                  : p.domain.values.front());
  space.resolve_activity(config);  // a conditional parameter that does not exist is dropped
  return config;
}

inline Configuration random_configuration(const SearchSpace& space, Xoshiro256& rng) {
  return configuration_from(space, [&] { return rng.uniform01(); });
}

// Trial `trial`'s point of the start-up design (startup_design = "sobol").
inline Configuration sobol_configuration(const SearchSpace& space, const SobolDesign& design,
                                         TrialId trial) {
  const std::vector<double> unit = design.point(trial);
  std::size_t next = 0;
  return configuration_from(space, [&] { return unit[next++]; });
}

}  // namespace slurmtune::core::gp
