#pragma once
// What Optuna 3.1's samplers share about one parameter's distribution: its
// RandomSampler draw, whether it has a single value (then no sampler is asked), and,
// for define-by-run spaces, whether a parameter is suggested at all given the values
// chosen before it. tpe (tpe_sampler.hpp) and nsga2 (nsga2_sampler.hpp) use them alike.
#include <cstddef>
#include <vector>

#include "core/search/optuna/numpy_compat.hpp"
#include "core/search/optuna/parzen_estimator.hpp"

namespace slurmtune::core::tpe {

/// A parameter exists only while an earlier one (`parent`, a categorical) takes one of
/// `values` (internal representation: choice indices) and is itself active.
struct Condition {
  std::size_t parent = 0;
  std::vector<double> values;
};

/// Whether every condition holds for the values chosen so far (NaN: inactive).
bool conditions_hold(const std::vector<Condition>& conditions, const std::vector<double>& chosen);

/// Optuna's distribution.single(): one value only, never drawn.
bool is_single(const Distribution& d);
/// That value (a categorical's index 0).
double single_value(const Distribution& d);

/// The largest double below `high` (Optuna keeps a float draw under its upper bound).
double below_max(double high);

/// RandomSampler.sample_independent: one uniform draw per column of Optuna's
/// search-space transform (a categorical has one column per choice and takes the
/// argmax), mapped back (internal representation).
double sample_random(const Distribution& d, NumpyRandomState& rng);

}  // namespace slurmtune::core::tpe
