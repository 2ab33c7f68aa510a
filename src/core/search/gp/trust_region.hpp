#pragma once
// A trust region around the incumbent, TuRBO-1's (Eriksson, Pearce, Gardner, Turner,
// Poloczek 2019, "Scalable global optimization via local Bayesian optimization"), clean-room
// from the paper and fitted to MOBSTER's asynchronous rungs (`[sampler] trust_region`):
// a model trial's candidates come from a box around the best first-rung trial, whose side
// doubles after a run of successes and halves after a run of failures, so the search
// closes in on a narrow good region once it has hit it, and starts wide again when the
// box has shrunk to nothing.
//
// The side is a function of the observations in arrival order: replay and resume rebuild
// it by feeding them again.
#include <cstddef>
#include <map>
#include <span>
#include <vector>

#include "core/random.hpp"
#include "core/space/search_space.hpp"

namespace slurmtune::core::gp {

class TrustRegion {
 public:
  // TuRBO's constants: the side in unit coordinates, the runs that resize it, and how much
  // better than the best a success must be.
  static constexpr double kInitialSide = 0.8, kMaxSide = 1.6, kMinSide = 1.0 / 128;
  static constexpr std::size_t kSuccessRun = 3, kMinFailureRun = 4;
  static constexpr double kSuccessMargin = 1e-3;

  /// `parameters`: the sampled parameters, whose count sets the failure run (max(4, d)).
  explicit TrustRegion(std::size_t parameters);

  /// An observation at `resource` (score: larger is better). `counted`: whether it is the
  /// first observation of a trial the box proposed, which judges the box; every finite
  /// one moves its resource's best.
  void observed(double resource, double score, bool counted);
  /// The box's side now, in unit coordinates before the length-scale weights.
  double side() const { return side_; }

 private:
  std::size_t failure_run_;
  double side_ = kInitialSide;
  std::size_t successes_ = 0, failures_ = 0;
  std::map<double, double> best_;  // the best finite score by resource
};

/// Each sampled number's share of the side: its input's length scale over the geometric
/// mean of the numbers' (TuRBO's weighting), by parameter index (1 for choices, constants
/// and where `length_scales` is empty: a surrogate without any). `number_inputs[k]` is
/// the model input of the k-th number among the parameters.
std::vector<double> box_weights(const SearchSpace& space, std::span<const double> length_scales,
                                std::span<const std::size_t> number_inputs);

/// A number is short, for `[sampler] trust_region_inputs = "short"`, where its weight (its
/// length scale over the numbers' geometric mean) is under this: the model has found it
/// matters more sharply than the others.
inline constexpr double kShortWeight = 0.5;

/// Whether any parameter's weight (box_weights) marks a short number.
bool any_short(std::span<const double> weights);

/// A configuration drawn uniformly along the short numbers only: each short number from
/// the box of `side` x `weights[j]` around `centre` (clipped to its range), every other
/// parameter (long numbers, choices, one absent in the centre) from its whole domain.
Configuration draw_along_short(const SearchSpace& space, const Configuration& centre,
                               std::span<const double> weights, double side, Xoshiro256& rng);

/// A configuration drawn uniformly from the box of `side` x `weights[j]` around `centre`
/// (clipped to each range). With more than 20 sampled parameters each one moves with
/// probability 20/d, at least one (TuRBO's perturbation mask); a moved choice is redrawn
/// with probability `choice_resample`; a parameter absent in the centre takes a value of
/// its own.
Configuration draw_in_box(const SearchSpace& space, const Configuration& centre,
                          std::span<const double> weights, double side, double choice_resample,
                          Xoshiro256& rng);

}  // namespace slurmtune::core::gp
