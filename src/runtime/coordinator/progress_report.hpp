#pragma once
// The progress line `slurmtune run` logs every progress_interval_s, and the summary it
// ends with: counts, the report rate, running trials that have gone silent, the best
// value so far.
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/study/study_controller.hpp"

namespace slurmtune::runtime {

class ProgressReport {
 public:
  using Clock = std::chrono::steady_clock;

  /// `silent_after_s`: a running trial without a sign of life for this long is named.
  ProgressReport(double interval_s, double silent_after_s);

  /// A progress line is due (interval_s since the last one).
  bool due() const;
  /// Logs the line (`final`: the summary, with the best configuration). `quiet_s` holds
  /// each running trial's seconds since its last report, heartbeat or checkpoint;
  /// `loop`, the longest turn of the coordinator's loop in the window (not in the summary).
  void print(bool final, const core::StudyController& controller,
             const std::vector<std::pair<core::TrialId, double>>& quiet_s,
             const std::string& loop = {});

  /// "; silent: trial 3 (312 s), trial 9 (305 s)": the trials a user should look at
  /// (at most five named).
  std::string silent_trials(const std::vector<std::pair<core::TrialId, double>>& quiet_s) const;

 private:
  double interval_s_, silent_after_s_;
  Clock::time_point last_ = Clock::now();
  std::uint64_t reports_at_last_ = 0;
};

}  // namespace slurmtune::runtime
