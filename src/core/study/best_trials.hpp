#pragma once
// The study's best trial as the run's progress and summary lines name it: the best value
// any trial reported, among the trials that have not failed. A trial whose value led
// and which then crashed is forgotten, and the next best takes its place (Optuna counts
// only trials that did not fail; a crashed configuration must never be recommended).
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/objectives/mode.hpp"
#include "core/trial_id.hpp"

namespace slurmtune::core {

struct BestSoFar {
  TrialId trial = 0;
  double step = 0;
  double value = 0;
};

class BestTrials {
 public:
  explicit BestTrials(Mode mode) : mode_(mode) {}

  /// A report of `trial`; NaN is never best. Ties keep the earlier value.
  void note(TrialId trial, double step, double value);
  /// `trial` failed: never best from now on.
  void forget(TrialId trial);
  /// The best of the trials not forgotten; ties go to the lower id.
  std::optional<BestSoFar> best() const;

 private:
  using Ranked = std::pair<double, TrialId>;  // (signed value, lower is better; trial)
  double signed_value(double value) const { return mode_ == Mode::Min ? value : -value; }
  /// Whether `entry` is still its trial's best (not improved on since, not forgotten).
  bool current(const Ranked& entry) const;
  /// Pops the entries at the top that are no longer current; rebuilds the heap from the
  /// trials' bests when most of it is such entries.
  void settle();

  Mode mode_;
  std::unordered_map<TrialId, BestSoFar> by_trial_;
  // A min-heap of every improvement, the best on top; an entry its trial improved on or
  // forgot stays until it reaches the top or the heap is rebuilt. Nearly every report
  // improves its trial's value: an ordered set re-placed a node per report, a walk of
  // 16,384 nodes with a cache miss at each level (8 % of the loop's time at 2,048 nodes),
  // where a push onto the heap's end mostly stays there.
  std::vector<Ranked> heap_;
};

}  // namespace slurmtune::core
