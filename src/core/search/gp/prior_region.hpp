#pragma once
// `[sampler] prior` (issue #64): where earlier studies of another task (the same model at
// another size: a quarter of the data, a narrower net) found their best configurations,
// as a density MOBSTER draws its start-up trials and a share of its candidates from.
//
// Only the earlier studies' ranking is used, never their values: a task at another size
// has other values everywhere (less data, a higher loss), which is what misleads a model
// that takes them as this study's observations (`warm_start`), while the good region often
// stays where it was. Where it does not, the expected improvement still chooses among the
// candidates, a share of which stay uniform, and the model learns from this study alone.
//
// The good configurations: the top kTopShare (at least kMinGood) of the earlier trials in
// successive halving's order (the highest resource a trial was judged at or completed,
// then its value there). The density: one of them, chosen uniformly, with each number
// moved by a normal of its dimension's bandwidth in unit coordinates (Scott's rule over
// the good set, within [kMinBandwidth, kMaxBandwidth]) and folded back into the domain,
// and each choice kept with probability 1 - kChoiceRedraw, else redrawn.
//
// Each good configuration's lesson (asha_promotion's trust_check_waiver = "lesson"): at each
// resource an earlier study judged it at, the share of the other earlier trials judged there
// that beat it. A share, not a value, so that it compares with a rung of this task: a late
// bloomer ranks low at the first rung here and did there; a lesson that broke ranks low here
// only.
#include <cstddef>
#include <vector>

#include "core/random.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/search/past_trial.hpp"
#include "core/space/search_space.hpp"

namespace slurmtune::core::gp {

class PriorRegion {
 public:
  static constexpr double kTopShare = 0.15;
  static constexpr std::size_t kMinGood = 5;
  static constexpr double kMinBandwidth = 0.05, kMaxBandwidth = 0.25;
  static constexpr double kChoiceRedraw = 0.2;

  /// InputError when no earlier trial has a finite judged or completed value.
  PriorRegion(const SearchSpace& space, const std::vector<PastTrial>& past, bool maximize);

  /// The good configurations, best first.
  const std::vector<Configuration>& good() const { return good_; }
  /// By good configuration: what the earlier studies saw of it at each rung, lowest first.
  const std::vector<std::vector<RungLesson>>& lessons() const { return lessons_; }
  /// Each sampled number's bandwidth (unit coordinates), by parameter; 0 for the others.
  const std::vector<double>& bandwidths() const { return bandwidths_; }
  /// A draw from the density.
  Configuration sample(Xoshiro256& rng) const;

 private:
  const SearchSpace* space_;
  std::vector<Configuration> good_;
  std::vector<std::vector<RungLesson>> lessons_;  // by good configuration
  std::vector<double> bandwidths_;
};

}  // namespace slurmtune::core::gp
