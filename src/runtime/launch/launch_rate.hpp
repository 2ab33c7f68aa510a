#pragma once
// How fast the coordinator starts job steps (issue #61): every `srun` asks slurmctld to
// create a step, which it does at tens a second on a small cluster and about 150 a
// second at best on a large one; a burst of thousands has every srun retrying against
// it ("Job step creation temporarily disabled") from one node. A token bucket: up to
// `per_second` steps a second, and a burst of as many (at least one) after a pause.
#include <chrono>

namespace slurmtune::runtime {

class LaunchRate {
 public:
  using Clock = std::chrono::steady_clock;
  /// `per_second` > 0 (UsageError otherwise).
  explicit LaunchRate(double per_second);

  /// Whether the rate allows a launch at `now`; false: none until later.
  bool allows(Clock::time_point now);
  /// Counts a launch that allows() let through.
  void take() { tokens_ -= 1; }
  double per_second() const { return per_second_; }

 private:
  double per_second_;
  double burst_;  // the bucket's size
  double tokens_;
  Clock::time_point refilled_{};
  bool started_ = false;
};

}  // namespace slurmtune::runtime
