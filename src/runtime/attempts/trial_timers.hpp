#pragma once
// When a running attempt next needs a look (its time limit, its silence limit, a signal
// due, an exit waiting for its last messages): a heap of wake-ups, so that the
// coordinator's periodic work costs what is due, not a walk over every running trial
// (issue #62: at 16,384 trials those walks were most of a loop turn).
//
// A wake-up is a hint, not a promise: whoever pops one checks the attempt's own fields
// (an attempt may have ended, or its deadline moved), so a stale or repeated hint costs
// one look and nothing else.
#include <chrono>
#include <cstddef>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "core/trial_id.hpp"

namespace slurmtune::runtime {

/// `seconds` (a limit or grace from the study or the command line) on the steady clock.
inline std::chrono::steady_clock::duration steady_seconds(double seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(seconds));
}

class TrialTimers {
 public:
  using Clock = std::chrono::steady_clock;

  /// Look at `trial` again at `when` (or at the first tick after it).
  void wake_at(core::TrialId trial, Clock::time_point when);
  /// The trials with a wake-up at or before `now`, each once, in ascending order; their
  /// wake-ups are consumed.
  std::vector<core::TrialId> take_due(Clock::time_point now);
  /// Drops the wake-ups of trials `running` says are gone, once the heap has doubled
  /// since it was last compacted (hints of ended attempts would otherwise pile up at the
  /// launch rate times the longest limit): amortized, a wake-up is dropped once.
  void compact(const std::function<bool(core::TrialId)>& running);
  std::size_t size() const { return heap_.size(); }

 private:
  using Entry = std::pair<Clock::time_point, core::TrialId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  std::size_t compact_above_ = 1024;
};

}  // namespace slurmtune::runtime
