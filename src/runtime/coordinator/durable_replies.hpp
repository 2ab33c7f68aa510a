#pragma once
// Decisions that wait for the results file (issue #62). A decision that makes a trial
// save a checkpoint (or load a PBT donor's) goes out only once the rows it depends on
// are durable: a checkpoint file is often overwritten in place, and a resumed study must
// not hand a trial an older step than its file holds. The reply waits here for the
// writer's next group commit (StudyWriter::commit_ticket) instead of forcing a flush on
// the loop: at 16,384 running trials, with rung crossings every few milliseconds, a
// flush per crossing stalled every other trial's decision.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>

#include "runtime/control/control_server.hpp"

namespace slurmtune::runtime {

class DurableReplies {
 public:
  using Clock = std::chrono::steady_clock;

  /// Holds `reply` to `to` until the writer's flush number `ticket` is durable. Tickets
  /// never decrease in the order replies are held.
  void hold(ConnectionId to, Reply reply, std::uint64_t ticket,
            Clock::time_point now = Clock::now());
  /// Hands each held reply whose ticket is at most `durable` to `send`, in the order held.
  void release(std::uint64_t durable, const std::function<void(ConnectionId, const Reply&)>& send,
               Clock::time_point now = Clock::now());
  std::size_t held() const { return held_.size(); }

  /// How long the released replies were held, for the session's last lines: "decisions
  /// held for a group commit: N; up to 10 ms A, 10-100 ms B, 0.1-1 s C, over 1 s D;
  /// longest X" (empty when none was). What a write-ahead costs the trials that wait.
  std::string summary() const;

 private:
  struct Held {
    ConnectionId to;
    Reply reply;
    std::uint64_t ticket;
    Clock::time_point since;
  };
  std::deque<Held> held_;
  std::array<std::uint64_t, 4> by_decade_{};  // up to 10 ms, 10-100 ms, 0.1-1 s, over 1 s
  Clock::duration longest_{};
};

}  // namespace slurmtune::runtime
