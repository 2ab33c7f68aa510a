#pragma once
// How long the coordinator's loop was kept from waiting (issue #62, item 4): every turn's
// busy time -- the callbacks of the events it woke for, then its periodic work (timeouts,
// the results file's flush, launches) -- since every trial waits for its DECISION on this
// one loop, and a turn of a second idles every reporting GPU for that second. The
// progress line shows the longest turn of its window, the session's summary the longest
// of all with what filled it and how many turns passed 10 ms, 100 ms and 1 s.
#include <array>
#include <chrono>
#include <cstdint>
#include <string>

namespace slurmtune::runtime {

class LoopStalls {
 public:
  using Clock = std::chrono::steady_clock;

  /// One turn: `events` callbacks took `events_time`, the periodic work `periodic_time`.
  void record(int events, Clock::duration events_time, Clock::duration periodic_time);
  /// "longest loop turn 3.2 ms": the window since the last call, which starts a new one.
  std::string take_window();
  /// The session's: "loop: longest turn 41.0 ms (12 event(s) 38.5 ms, periodic work
  /// 2.5 ms); turns over 10 ms: 3, over 100 ms: 0, over 1 s: 0 (of 5120)".
  std::string summary() const;
  double longest_ms() const;

 private:
  struct Turn {
    int events = 0;
    Clock::duration events_time{}, periodic_time{};
    Clock::duration total() const { return events_time + periodic_time; }
  };
  Turn longest_, window_;
  std::array<std::uint64_t, 3> over_{};  // turns over 10 ms, 100 ms, 1 s
  std::uint64_t turns_ = 0;
};

}  // namespace slurmtune::runtime
