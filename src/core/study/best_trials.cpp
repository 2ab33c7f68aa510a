#include "core/study/best_trials.hpp"

#include <cmath>

namespace slurmtune::core {

void BestTrials::note(TrialId trial, double step, double value) {
  if (std::isnan(value)) return;
  const auto found = by_trial_.find(trial);
  if (found == by_trial_.end()) {
    const auto rank = ranked_.emplace(signed_value(value), trial).first;
    by_trial_.emplace(trial, Entry{BestSoFar{trial, step, value}, rank});
    return;
  }
  Entry& entry = found->second;
  if (!(signed_value(value) < signed_value(entry.best.value))) return;
  entry.best = BestSoFar{trial, step, value};
  // Most reports improve on their trial's best: its node moves, found by its iterator,
  // not by a search of every trial's (and not freed and allocated again).
  auto node = ranked_.extract(entry.rank);
  node.value().first = signed_value(value);
  entry.rank = ranked_.insert(std::move(node)).position;
}

void BestTrials::forget(TrialId trial) {
  const auto it = by_trial_.find(trial);
  if (it == by_trial_.end()) return;
  ranked_.erase(it->second.rank);
  by_trial_.erase(it);
}

std::optional<BestSoFar> BestTrials::best() const {
  if (ranked_.empty()) return std::nullopt;
  return by_trial_.at(ranked_.begin()->second).best;
}

}  // namespace slurmtune::core
