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

// Deadlines come due from a heap, not from a walk over every attempt: each attempt due
// is named once, in order of id, and attempts that ended are not named.
BOOST_AUTO_TEST_CASE(wake_ups_name_each_attempt_due_once_and_forget_ended_ones) {
  TrialTable table;
  const auto t0 = Clock::now();
  for (core::TrialId id : {1, 2, 3})
    table.add(attempt(id));
  table.wake_at(3, t0 + std::chrono::seconds(1));
  table.wake_at(1, t0 + std::chrono::seconds(2));
  table.wake_at(3, t0 + std::chrono::seconds(2));  // a second hint for the same attempt
  table.wake_at(2, t0 + std::chrono::seconds(5));
  BOOST_TEST(table.take_due(t0).empty());
  BOOST_TEST(table.take_due(t0 + std::chrono::seconds(2)) == (std::vector<core::TrialId>{1, 3}));
  BOOST_TEST(table.take_due(t0 + std::chrono::seconds(3)).empty());  // consumed
  table.erase(2);
  BOOST_TEST(table.take_due(t0 + std::chrono::seconds(9)).empty());
}

// The wait for an ended process's last messages wakes its attempt when it runs out.
BOOST_AUTO_TEST_CASE(an_exit_with_open_connections_wakes_its_attempt_when_the_wait_ends) {
  TrialTable table;
  const auto t0 = Clock::now();
  ActiveTrial& t = table.add(attempt(7));
  table.bind(40, 7);
  BOOST_TEST(!table.messages_drained(t, t0));
  BOOST_TEST(table.take_due(t0 + std::chrono::milliseconds(1999)).empty());
  BOOST_TEST(table.take_due(t0 + std::chrono::seconds(2)) == std::vector<core::TrialId>{7});
  BOOST_TEST(table.messages_drained(t, t0 + std::chrono::seconds(2)));
}

// Hints of attempts that ended are dropped once they pile up: the heap follows the
// running attempts, not every attempt the study ever launched.
BOOST_AUTO_TEST_CASE(hints_of_ended_attempts_do_not_pile_up) {
  TrialTable table;
  const auto later = Clock::now() + std::chrono::hours(1);
  for (core::TrialId id = 0; id < 10000; ++id) {
    table.add(attempt(id));
    table.wake_at(id, later);  // a time limit an hour away
    if (id >= 10) table.erase(id - 10);
    table.take_due(Clock::now());
  }
  BOOST_TEST(table.size() == 10U);
  BOOST_TEST(table.timer_count() <= 2048U);
  BOOST_TEST(table.take_due(later).size() == 10U);
}
