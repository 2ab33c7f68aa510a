#pragma once
// The model MOBSTER's acquisition asks (`[sampler] surrogate`): the Gaussian process, or a
// random forest in SMAC's style for wide spaces where the GP's picks are no better than
// random draws (issue #64, item 3). Both answer a mean and a variance at any point and
// each observation's leave-one-out mean (Hyper-Tune's rung weighting ranks by them); only
// the GP draws jointly (Thompson sampling), and the study reader refuses that with a forest.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/search/forest/random_forest.hpp"
#include "core/search/gp/gaussian_process.hpp"

namespace slurmtune::core::gp {

class Surrogate {
 public:
  virtual ~Surrogate() = default;
  virtual std::vector<Prediction> predict(std::span<const double> points) const = 0;
  virtual std::vector<double> leave_one_out_means(std::span<const std::size_t> rows) const = 0;
  /// One joint draw at `points` (Posterior::joint_sample); a forest has none.
  virtual std::vector<double> joint_sample(std::span<const double> points,
                                           std::span<const double> normals) const = 0;
};

/// The GP posterior on `data` under `h`.
std::unique_ptr<Surrogate> gaussian_surrogate(Data data, Hyperparameters h);
/// A random forest grown on `data` from `seed`.
std::unique_ptr<Surrogate> forest_surrogate(Data data, const forest::ForestOptions& options,
                                            std::uint64_t seed);

}  // namespace slurmtune::core::gp
