#define BOOST_TEST_MODULE runtime_durable_replies
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "runtime/coordinator/durable_replies.hpp"

// Decisions held for a group commit (src/runtime/coordinator/durable_replies.hpp): each
// goes once the flush it waits for is durable, in the order they were held, and none
// before.
using namespace slurmtune::runtime;

namespace {

Reply decision(const std::string& text) {
  return Reply{slurmtune::protocol::MessageType::Decision, text};
}

}  // namespace

BOOST_AUTO_TEST_CASE(held_decisions_go_when_their_flush_is_durable_in_order) {
  DurableReplies replies;
  replies.hold(7, decision("a"), 1);
  replies.hold(3, decision("b"), 2);
  replies.hold(7, decision("c"), 2);
  replies.hold(9, decision("d"), 4);
  std::vector<std::pair<ConnectionId, std::string>> sent;
  const auto send = [&](ConnectionId to, const Reply& r) { sent.emplace_back(to, r.payload); };
  replies.release(0, send);
  BOOST_TEST(sent.empty());
  replies.release(1, send);
  BOOST_TEST(sent.size() == 1U);
  replies.release(3, send);  // flush 3 holds flush 2's rows too
  BOOST_TEST(sent.size() == 3U);
  BOOST_TEST(replies.held() == 1U);
  replies.release(4, send);
  const std::vector<std::pair<ConnectionId, std::string>> expected{
      {7, "a"}, {3, "b"}, {7, "c"}, {9, "d"}};
  BOOST_TEST((sent == expected));
  BOOST_TEST(replies.held() == 0U);
}

BOOST_AUTO_TEST_CASE(a_ticket_older_than_the_last_held_is_a_bug_that_says_so) {
  DurableReplies replies;
  replies.hold(1, decision("a"), 5);
  BOOST_CHECK_THROW(replies.hold(2, decision("b"), 4), slurmtune::Error);
  BOOST_TEST(replies.held() == 1U);
}

// What the write-ahead costs the trials that wait, for the session's last lines.
BOOST_AUTO_TEST_CASE(the_summary_counts_how_long_released_decisions_were_held) {
  DurableReplies replies;
  BOOST_TEST(replies.summary().empty());
  const auto t0 = DurableReplies::Clock::time_point{};
  using std::chrono::milliseconds;
  replies.hold(1, decision("a"), 1, t0);
  replies.hold(2, decision("b"), 1, t0 + milliseconds(2));
  replies.hold(3, decision("c"), 2, t0 + milliseconds(3));
  replies.hold(4, decision("d"), 3, t0 + milliseconds(4));
  const auto send = [](ConnectionId, const Reply&) {};
  replies.release(1, send, t0 + milliseconds(9));     // held 9 ms and 7 ms
  replies.release(2, send, t0 + milliseconds(503));   // 500 ms
  replies.release(3, send, t0 + milliseconds(1504));  // 1.5 s
  BOOST_TEST(
      replies.summary() ==
      "decisions held until their report was durable: 4; up to 10 ms 2, 10-100 ms 0, 0.1-1 s 1, "
      "over 1 s 1; longest 1500.0 ms");
  replies.hold(5, decision("e"), 4, t0 + milliseconds(1600));
  BOOST_TEST(replies.summary().find(": 4;") != std::string::npos);  // held, not released yet
}
