#define BOOST_TEST_MODULE runtime_durable_replies
#include <boost/test/unit_test.hpp>
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
