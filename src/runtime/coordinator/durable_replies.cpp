#include "runtime/coordinator/durable_replies.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "store/study_writer.hpp"

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
    waited_.add(waited);
    send(next.to, next.reply);
  }
}

std::string DurableReplies::summary() const {
  const std::uint64_t released = waited_.from(0);
  if (released == 0) return {};
  return "decisions held until their report was durable: " + std::to_string(released) + "; " +
         waited_.text() + "; longest " +
         core::format_double(
             std::round(std::chrono::duration<double, std::milli>(longest_).count() * 10) / 10) +
         " ms";
}

void hold_for_next_commit(DurableReplies& replies, store::StudyWriter& writer, ConnectionId to,
                          Reply reply) {
  replies.hold(to, std::move(reply), writer.commit_ticket());
  writer.commit_soon();
}

}  // namespace slurmtune::runtime
