// The trial table: attempts and the connections bound to them, what ending an attempt
// forgets, and when an ended attempt's messages count as read.
#define BOOST_TEST_MODULE runtime_trial_table
#include <boost/test/unit_test.hpp>

#include "runtime/attempts/trial_table.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
using Clock = std::chrono::steady_clock;

namespace {
std::unique_ptr<ActiveTrial> attempt(core::TrialId id) {
  auto t = std::make_unique<ActiveTrial>();
  t->trial = id;
  t->started = t->last_sign = Clock::now();
  return t;
}
}  // namespace

BOOST_AUTO_TEST_CASE(connections_speak_for_their_trial_until_it_ends) {
  TrialTable table;
  table.add(attempt(3));
  table.add(attempt(5));
  table.bind(10, 3);  // rank 0
  table.bind(11, 3);  // rank 1
  table.bind(12, 5);
  BOOST_TEST(table.of_connection(11)->trial == 3U);
  BOOST_TEST(table.of_connection(99) == nullptr);
  BOOST_TEST(table.unbind(11).value() == 3U);
  BOOST_TEST(!table.unbind(11).has_value());
  table.erase(3);  // its remaining connection goes with it
  BOOST_TEST(table.of_connection(10) == nullptr);
  BOOST_TEST(table.find(3) == nullptr);
  BOOST_TEST(table.size() == 1U);
  BOOST_TEST(table.take_connections(5) == std::vector<ConnectionId>{12});
  BOOST_TEST(table.of_connection(12) == nullptr);
  BOOST_TEST(table.find(5) != nullptr);  // taking its connections leaves the attempt
}

BOOST_AUTO_TEST_CASE(an_ended_attempt_waits_for_its_open_connections_at_most_two_seconds) {
  TrialTable table;
  ActiveTrial& t = table.add(attempt(7));
  const auto now = Clock::now();
  BOOST_TEST(table.messages_drained(t, now));  // nothing open: read
  table.bind(1, 7);
  BOOST_TEST(!table.messages_drained(t, now));  // open: the exit waits, from now
  BOOST_TEST(t.exited_at.has_value());
  BOOST_TEST(!table.messages_drained(t, now + std::chrono::milliseconds(1999)));
  BOOST_TEST(table.messages_drained(t, now + std::chrono::seconds(2)));
  table.unbind(1);
  BOOST_TEST(table.messages_drained(t, now));
}

BOOST_AUTO_TEST_CASE(quiet_times_count_from_the_last_sign_of_life) {
  TrialTable table;
  ActiveTrial& t = table.add(attempt(1));
  const auto quiet = table.quiet_times(t.last_sign + std::chrono::seconds(30));
  BOOST_TEST(quiet.size() == 1U);
  BOOST_TEST(quiet.front().first == 1U);
  BOOST_TEST(quiet.front().second == 30.0);
}
