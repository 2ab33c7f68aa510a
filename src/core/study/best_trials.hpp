#pragma once
// The study's best trial as the run's progress and summary lines name it: the best value
// any trial reported, among the trials that have not failed. A trial whose value led
// and which then crashed is forgotten, and the next best takes its place (Optuna counts
// only trials that did not fail; a crashed configuration must never be recommended).
#include <cstdint>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

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
  double signed_value(double value) const { return mode_ == Mode::Min ? value : -value; }

  using Ranked = std::set<std::pair<double, TrialId>>;  // (signed value, lower is better; trial)
  struct Entry {
    BestSoFar best;
    Ranked::iterator rank;  // its place in ranked_: a report that improves moves it
  };

  Mode mode_;
  std::unordered_map<TrialId, Entry> by_trial_;
  Ranked ranked_;
};

}  // namespace slurmtune::core
