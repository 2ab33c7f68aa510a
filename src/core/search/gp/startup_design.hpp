#pragma once
// Where MOBSTER's start-up configurations come from with `startup_design = "sobol"`: one
// scrambled Sobol sequence per study (Boost.Random's `sobol` engine), so the first
// configurations spread over the space instead of clumping as independent draws may.
// Trial t takes the sequence's point t, and every coordinate's bits are flipped by a mask
// drawn from the study's seed (a digital shift: different seeds give different designs,
// and the shifted points keep the sequence's strata). A point depends on the seed and the
// trial alone, so replay and resume draw the same configurations.
#include <cstdint>
#include <vector>

namespace slurmtune::core::gp {

class SobolDesign {
 public:
  /// `dims`: the unit coordinates one configuration consumes (its sampled parameters).
  SobolDesign(std::size_t dims, std::uint64_t seed);
  /// The coordinates of point `index`, each in [0, 1).
  std::vector<double> point(std::uint64_t index) const;

 private:
  std::vector<std::uint64_t> masks_;  // one per coordinate
};

}  // namespace slurmtune::core::gp
