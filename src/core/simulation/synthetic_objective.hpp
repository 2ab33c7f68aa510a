#pragma once
// Synthetic benchmark objectives with learning curves, for `slurmtune simulate`.
// For a configuration with unit positions x_j = domain.to_unit(value_j) and a hidden
// optimum c_j drawn from the seed (uniform in [0.2, 0.8]):
//   bowl:      L_inf = 0.05 + (1/D) * sum_j 4 (x_j - c_j)^2
//   rastrigin: L_inf = 0.05 + (1/D) * sum_j [4 (x_j - c_j)^2 + (1 - cos(6 pi (x_j - c_j))) / 4]
// The loss after `step` steps follows a power law that starts at 2.5:
//   L(step) = L_inf + (2.5 - L_inf) * (1 + step)^(-alpha),  alpha = 0.3 + 1.2 x_0
// so the first parameter (typically the learning rate) sets how fast a trial learns:
// curves cross, which is exactly what makes early stopping hard. Each report adds
// Gaussian noise N(0, noise), a pure function of (seed, trial, step). A step takes
// step_time_s * (0.5 + x_last) virtual seconds (the last parameter plays batch size).
// With mode = "max" the reported value is 1 - L (an accuracy-like score).
// schedule: the first parameter u = x_0 plays a learning rate whose best value changes
// during training. A step shrinks the distance to a floor by a factor (1 - s(u)), and the
// floor itself rises with u (the noise a large step cannot settle below):
//   s(u) = 0.3 * 10^(-2 (1 - u)),  L_inf(u) = 0.02 + 0.5 * 10^(-2 (1 - u)) + bowl(x_1..)
//   L(step) = L_inf + (2.5 - L_inf) (1 - s)^step
// so a large u learns fast and stalls high, a small one the reverse: a decaying schedule
// (large, then smaller) beats every constant, which is what PBT can find and ASHA cannot.
// Several objectives: objective k >= 1 is a cost with its own hidden optimum c^(k) (drawn
// from the seed like c): 0.05 + (1/D) sum_j 4 (x_j - c^(k)_j)^2, the same at every step
// up to its noise (a latency or a memory footprint does not learn); 1 minus that for
// mode "max". Configurations between the optima trade the objectives: a Pareto front.
// PBT: a trial that takes over another's state at loss L0 after step s0 and changes its
// configuration continues along the new configuration's curve from the point where
// that curve reaches L0 (as if it had trained that far with the new configuration); a
// configuration whose floor lies above L0 pulls the loss back up towards its floor:
//   L(step) = L_inf' + (L0 - L_inf') (1 + step - s0)^(-alpha').
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/search/sampler.hpp"
#include "core/simulation/objective.hpp"
#include "core/study/study_spec.hpp"

namespace slurmtune::core {

class SyntheticObjective final : public Objective {
 public:
  /// Per-configuration constants, computed once per trial.
  struct Curve {
    double floor;        ///< L_inf
    double alpha;        ///< learning speed (schedule: the step's shrink factor s)
    double step_time_s;  ///< virtual seconds per step
    // L(step) = floor + (start - floor) (1 + progress + step - origin)^(-alpha): a fresh
    // curve starts at 2.5 at step 0; a PBT continuation where it took over.
    double start = 2.5;
    double progress = 0;
    double origin = 0;
  };

  /// Trial i follows curve i, of the configuration the sampler suggested for it.
  explicit SyntheticObjective(const StudySpec& study);

  Curve curve(const Configuration& config) const;
  /// Reported metric of trial `trial` after `step` steps (noise included).
  double value(const Curve& curve, TrialId trial, double step) const;

  std::optional<CurveId> draw(TrialId trial, const Suggestion& suggestion) override;
  Configuration configuration(CurveId curve) const override;
  std::optional<CurvePoint> report(CurveId curve, TrialId trial,
                                   std::uint32_t index) const override;
  std::uint64_t capacity() const override;
  std::optional<CurveId> continue_from(CurveId from, std::uint32_t index, TrialId trial,
                                       const Configuration& config) override;

 private:
  SearchSpace space_;
  std::optional<ConfigSampler> blind_;  // random, halton and grid samplers
  // By trial: every configuration of a model-based sampler; of a blind one, those of the
  // [[enqueue]]d trials 0..enqueued_-1 (the others are drawn again when asked for).
  std::vector<Configuration> configs_;
  std::size_t enqueued_ = 0;
  std::uint64_t capacity_;
  /// The noise-free loss of a curve after `step` steps.
  double loss(const Curve& c, double step) const;
  const Curve& curve_of(CurveId id) const;

  std::vector<Curve> curves_;  // by trial
  // PBT continuations, CurveId kContinued + index, with their configurations.
  std::vector<Curve> continued_;
  std::vector<Configuration> continued_configs_;
  bool rastrigin_;
  bool schedule_;  // geometric steps towards a floor that rises with x_0
  double noise_;
  double step_time_s_;
  Mode mode_;
  std::uint64_t seed_;
  std::vector<double> optimum_;
  std::vector<std::vector<double>> cost_optima_;  // objective k >= 1: its optimum
  std::vector<Mode> cost_modes_;
};

}  // namespace slurmtune::core
