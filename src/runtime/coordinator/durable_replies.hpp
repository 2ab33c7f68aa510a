#pragma once
// Decisions that wait for the results file (issue #62). A decision that makes a trial
// save a checkpoint (or load a PBT donor's) goes out only once the rows it depends on
// are durable: a checkpoint file is often overwritten in place, and a resumed study must
// not hand a trial an older step than its file holds. The reply waits here for the
// writer's next group commit (StudyWriter::commit_ticket) instead of forcing a flush on
// the loop: at 16,384 running trials, with rung crossings every few milliseconds, a
// flush per crossing stalled every other trial's decision.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>

#include "runtime/control/control_server.hpp"

namespace slurmtune::runtime {

class DurableReplies {
 public:
  /// Holds `reply` to `to` until the writer's flush number `ticket` is durable. Tickets
  /// never decrease in the order replies are held.
  void hold(ConnectionId to, Reply reply, std::uint64_t ticket);
  /// Hands each held reply whose ticket is at most `durable` to `send`, in the order held.
  void release(std::uint64_t durable, const std::function<void(ConnectionId, const Reply&)>& send);
  std::size_t held() const { return held_.size(); }

 private:
  struct Held {
    ConnectionId to;
    Reply reply;
    std::uint64_t ticket;
  };
  std::deque<Held> held_;
};

}  // namespace slurmtune::runtime
