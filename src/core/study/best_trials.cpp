#include "core/study/best_trials.hpp"

#include <cmath>

namespace slurmtune::core {

void BestTrials::note(TrialId trial, double step, double value) {
  if (std::isnan(value)) return;
  const auto [it, added] = by_trial_.try_emplace(trial, BestSoFar{trial, step, value});
  if (!added) {
    if (!(signed_value(value) < signed_value(it->second.value))) return;
    ranked_.erase({signed_value(it->second.value), trial});
    it->second = BestSoFar{trial, step, value};
  }
  ranked_.insert({signed_value(value), trial});
}

void BestTrials::forget(TrialId trial) {
  const auto it = by_trial_.find(trial);
  if (it == by_trial_.end()) return;
  ranked_.erase({signed_value(it->second.value), trial});
  by_trial_.erase(it);
}

std::optional<BestSoFar> BestTrials::best() const {
  if (ranked_.empty()) return std::nullopt;
  return by_trial_.at(ranked_.begin()->second);
}

}  // namespace slurmtune::core
