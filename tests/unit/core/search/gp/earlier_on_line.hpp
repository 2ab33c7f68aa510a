#pragma once
// Shared by the unit tests of `[sampler] prior` (test_prior_region.cpp, test_prior_model.cpp):
// a space of one number and an earlier study on it.
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "unit/core/search/suggester_testing.hpp"

namespace slurmtune::testing {

inline const core::SearchSpace kLine({{"x", ranged(core::DomainKind::Uniform, 0, 1)}});

/// `n` earlier trials evenly over [0, 1), each judged at rung 1 by |x - centre| + `offset`
/// (another size of the task: every value higher); with `rung_three`, those within 0.1 of
/// the centre also at rung 3, where they did a little better (|x - centre| / 2 + `offset`).
inline std::vector<core::PastTrial> earlier_on_line(double centre, std::size_t n = 40,
                                                    double offset = 0, bool rung_three = true) {
  std::vector<core::PastTrial> past;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    core::PastTrial t;
    t.config = core::Configuration({core::ParamValue{x}});
    t.judged.push_back({1, std::fabs(x - centre) + offset, 1});
    if (rung_three && std::fabs(x - centre) < 0.1)
      t.judged.push_back({3, std::fabs(x - centre) / 2 + offset, 3});
    t.end = core::TrialEnd::Stopped;
    past.push_back(std::move(t));
  }
  return past;
}

inline double x_of(const core::Configuration& c) {
  return core::as_number(c.values[0]);
}

}  // namespace slurmtune::testing
