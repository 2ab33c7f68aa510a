#include "runtime/coordinator/durable_replies.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "core/number_text.hpp"

namespace slurmtune::runtime {

void DurableReplies::hold(ConnectionId to, Reply reply, std::uint64_t ticket,
                          Clock::time_point now) {
  if (!held_.empty() && ticket < held_.back().ticket)
    throw Error("durable replies: flush " + std::to_string(ticket) + " held after flush " +
                std::to_string(held_.back().ticket));
  held_.push_back({to, std::move(reply), ticket, now});
}

void DurableReplies::release(std::uint64_t durable,
                             const std::function<void(ConnectionId, const Reply&)>& send,
                             Clock::time_point now) {
  while (!held_.empty() && held_.front().ticket <= durable) {
    const Held next = std::move(held_.front());
    held_.pop_front();
    const Clock::duration waited = now - next.since;
    longest_ = std::max(longest_, waited);
    std::size_t decade = 0;
    for (auto bound = std::chrono::duration<double>(0.01);
         decade + 1 < by_decade_.size() && waited > bound; bound *= 10)
      ++decade;
    ++by_decade_[decade];
    send(next.to, next.reply);
  }
}

std::string DurableReplies::summary() const {
  std::uint64_t released = 0;
  for (const std::uint64_t n : by_decade_)
    released += n;
  if (released == 0) return {};
  return "decisions held for a group commit: " + std::to_string(released) + "; up to 10 ms " +
         std::to_string(by_decade_[0]) + ", 10-100 ms " + std::to_string(by_decade_[1]) +
         ", 0.1-1 s " + std::to_string(by_decade_[2]) + ", over 1 s " +
         std::to_string(by_decade_[3]) + "; longest " +
         core::format_double(
             std::round(std::chrono::duration<double, std::milli>(longest_).count() * 10) / 10) +
         " ms";
}

}  // namespace slurmtune::runtime
