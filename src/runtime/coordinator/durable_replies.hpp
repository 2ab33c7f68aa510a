#pragma once
// Decisions that wait for the results file (issue #62). A decision that makes a trial
// save a checkpoint (or load a PBT donor's) goes out only once the rows it depends on
// are durable: a checkpoint file is often overwritten in place, and a resumed study must
// not hand a trial an older step than its file holds. The reply waits here for the
// batch that holds its report (StudyWriter::commit_ticket) to be durable: logged at the
// end of the loop's turn by the coordinator's writer (its write-ahead log), or, for a
// writer without one, in its next group commit. A flush per crossing on the loop, at
// 16,384 running trials with rung crossings every few milliseconds, stalled every other
// trial's decision; a group commit per crossing kept them waiting up to seconds.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>

#include "runtime/control/control_server.hpp"
#include "runtime/control/decade_counts.hpp"

namespace slurmtune::store {
class StudyWriter;
}  // namespace slurmtune::store

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
  /// held until their report was durable: N; up to 10 ms A, 10-100 ms B, 0.1-1 s C, over 1 s D;
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
  DecadeCounts<4> waited_{DecadeCounts<4>::Milliseconds(10)};  // 10 ms, 100 ms, 1 s, over
  Clock::duration longest_{};
};

/// Holds `reply` to `to` in `replies` until `writer`'s next group commit, and asks the
/// writer for that commit soon (a write-ahead: a report's decision, a PBT exploit's).
void hold_for_next_commit(DurableReplies& replies, store::StudyWriter& writer, ConnectionId to,
                          Reply reply);

}  // namespace slurmtune::runtime
