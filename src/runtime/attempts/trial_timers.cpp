#include "runtime/attempts/trial_timers.hpp"

#include <algorithm>

namespace slurmtune::runtime {

void TrialTimers::wake_at(core::TrialId trial, Clock::time_point when) {
  heap_.emplace(when, trial);
}

std::vector<core::TrialId> TrialTimers::take_due(Clock::time_point now) {
  std::vector<core::TrialId> due;
  while (!heap_.empty() && heap_.top().first <= now) {
    due.push_back(heap_.top().second);
    heap_.pop();
  }
  std::sort(due.begin(), due.end());
  due.erase(std::unique(due.begin(), due.end()), due.end());
  return due;
}

void TrialTimers::compact(const std::function<bool(core::TrialId)>& running) {
  if (heap_.size() <= compact_above_) return;
  std::vector<Entry> kept;
  kept.reserve(heap_.size());
  for (; !heap_.empty(); heap_.pop())
    if (running(heap_.top().second)) kept.push_back(heap_.top());
  compact_above_ = std::max<std::size_t>(1024, 2 * kept.size());
  heap_ = decltype(heap_)(std::greater<>(), std::move(kept));
}

}  // namespace slurmtune::runtime
