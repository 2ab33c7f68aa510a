#include "core/study/best_trials.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace slurmtune::core {

void BestTrials::note(TrialId trial, double step, double value) {
  if (std::isnan(value)) return;
  const auto [it, added] = by_trial_.try_emplace(trial, BestSoFar{trial, step, value});
  if (!added) {
    if (!(signed_value(value) < signed_value(it->second.value))) return;
    it->second = BestSoFar{trial, step, value};
  }
  heap_.emplace_back(signed_value(value), trial);
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  settle();
}

void BestTrials::forget(TrialId trial) {
  if (by_trial_.erase(trial) == 0) return;
  settle();
}

std::optional<BestSoFar> BestTrials::best() const {
  if (heap_.empty()) return std::nullopt;
  return by_trial_.at(heap_.front().second);
}

bool BestTrials::current(const Ranked& entry) const {
  const auto it = by_trial_.find(entry.second);
  // A trial's value only improves (strictly), so its latest entry is the one that equals it.
  return it != by_trial_.end() && signed_value(it->second.value) == entry.first;
}

void BestTrials::settle() {
  if (heap_.size() > 2 * by_trial_.size() + 64) {
    heap_.clear();
    for (const auto& [trial, best] : by_trial_)
      heap_.emplace_back(signed_value(best.value), trial);
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
    return;
  }
  while (!heap_.empty() && !current(heap_.front())) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    heap_.pop_back();
  }
}

}  // namespace slurmtune::core
