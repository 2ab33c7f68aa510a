#include "runtime/coordinator/durable_replies.hpp"

#include <utility>

#include "core/error.hpp"

namespace slurmtune::runtime {

void DurableReplies::hold(ConnectionId to, Reply reply, std::uint64_t ticket) {
  if (!held_.empty() && ticket < held_.back().ticket)
    throw Error("durable replies: flush " + std::to_string(ticket) + " held after flush " +
                std::to_string(held_.back().ticket));
  held_.push_back({to, std::move(reply), ticket});
}

void DurableReplies::release(std::uint64_t durable,
                             const std::function<void(ConnectionId, const Reply&)>& send) {
  while (!held_.empty() && held_.front().ticket <= durable) {
    const Held next = std::move(held_.front());
    held_.pop_front();
    send(next.to, next.reply);
  }
}

}  // namespace slurmtune::runtime
