#pragma once
// How long the coordinator's loop was kept from waiting, and by what (issue #62, item 4):
// every trial waits for its DECISION on this one loop, and a turn of a second idles every
// reporting GPU for that second. A turn is the callbacks of the events it woke for, then
// its periodic work; scopes inside it (a decision, a suggestion, a launch, the results
// file...) say what each part of it was. The progress line shows the longest turn of its
// window and what filled it; each commit records the longest of about the last minute,
// how busy the loop was then, and the session's longest (`slurmtune status`, the
// dashboard); the session's summary gives a histogram of turns and where the time went.
//
// A turn is wall time. Each is also read on the loop thread's CPU clock, which does not
// count what an interrupt, another thread or a virtual machine's host took of the core:
// a long turn the thread ran for only a part of is the machine's, not the loop's work
// (on this project's 2-core test VM, turns of 20-45 ms with under 0.1 ms of the
// thread's time; doc/performance/control-plane.md).
#include <array>
#include <chrono>
#include <cstdint>
#include <string>

#include "core/study/loop_figures.hpp"
#include "runtime/control/decade_counts.hpp"

namespace slurmtune::runtime {

/// The CPU time the calling thread has used, in seconds: called on the loop's, what the
/// loop took of the process's (the session's last lines, and each turn's share).
double loop_thread_cpu_seconds();

class LoopStalls {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = Clock::time_point (*)();
  /// The CPU time the calling thread has used, in seconds.
  using CpuNow = double (*)();
  using Work = core::LoopWork;

  /// `now` is the clock the scopes read, `cpu_now` the loop thread's CPU clock, read
  /// once a turn, on the loop (tests pass their own).
  explicit LoopStalls(Now now = &Clock::now, CpuNow cpu_now = &loop_thread_cpu_seconds)
      : now_(now), cpu_now_(cpu_now), cpu_at_turn_end_(cpu_now()) {}

  /// Time from construction to destruction counts as `work`, less what scopes nested in
  /// it count as theirs.
  class [[nodiscard]] Scope {
   public:
    Scope(LoopStalls& stalls, Work work);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    LoopStalls& stalls_;
    Work work_;
    Clock::time_point start_;
    Clock::duration measured_before_;
  };
  Scope measure(Work work) { return Scope(*this, work); }

  /// Forgets what scopes measured before the loop's first turn (a resume's settling).
  void forget_so_far() {
    split_ = {};
    measured_ = {};
    cpu_at_turn_end_ = cpu_now_();
  }
  /// The loop woke at `woke`; its events' callbacks are done and the periodic work
  /// begins: what no scope claimed since `woke` was messages.
  void periodic_begins(Clock::time_point woke);
  /// The turn ends: what no scope claimed since periodic_begins was periodic work.
  void turn_ends();

  /// "longest loop turn 3.2 ms (decisions)": the window since the last call, which
  /// starts a new one.
  std::string take_window();
  /// The session's: the longest turn, what filled it and how much of it the loop's
  /// thread ran, and the turns over 10 ms (with those the thread ran under half of),
  /// 100 ms and 1 s.
  std::string summary() const;
  /// The session's busy time by work, and how many turns took up to 1 ms, 10 ms, ...
  std::string work_summary() const;
  double longest_ms() const;
  /// For the results file's commit row (core::LoopFigures).
  core::LoopFigures figures() const;

  /// The recent window of figures(): buckets of this length, the last kRecentBuckets.
  static constexpr std::chrono::seconds kBucket{10};
  static constexpr std::size_t kRecentBuckets = 6;

 private:
  using Split = std::array<Clock::duration, core::kLoopWorkKinds>;
  struct Turn {
    Split work{};
    Clock::duration total{};
    Clock::duration ran{};  // the loop thread's CPU time in it
    Work dominant() const;
  };
  struct Bucket {
    std::int64_t index = -1;  // which kBucket since the first turn (-1: unused)
    Turn longest;
    Clock::duration busy{};
  };

  Now now_;
  CpuNow cpu_now_;
  double cpu_at_turn_end_;  // the loop thread's CPU seconds when the last turn ended
  // The turn under way.
  Split split_{};
  Clock::duration measured_{};  // all scopes' own time so far this turn
  Clock::duration measured_at_periodic_{};
  Clock::time_point woke_{}, periodic_from_{};
  // Across turns.
  Turn longest_, window_;
  Split busy_by_work_{};
  DecadeCounts<5> by_length_{DecadeCounts<5>::Milliseconds(1)};  // turns: 1 ms, ..., 1 s, over
  std::uint64_t turns_ = 0;
  std::uint64_t long_turns_off_core_ = 0;  // over 10 ms, the thread running under half
  Clock::time_point first_turn_{};
  Clock::time_point last_turn_{};
  std::array<Bucket, kRecentBuckets> recent_{};
};

}  // namespace slurmtune::runtime
