// The coordinator's loop stalls (issue #62, item 4): each turn split by what filled it
// (scopes, nested ones apart; what no scope claims is messages while events run and
// periodic work after), the longest turn and the window's, the histogram of turns, and
// the figures a commit records for about the last minute. A clock of the test's own.
#define BOOST_TEST_MODULE runtime_loop_stalls
#include <boost/test/unit_test.hpp>
#include <ostream>

#include "runtime/control/loop_stalls.hpp"

using namespace slurmtune::runtime;
using slurmtune::core::LoopWork;
using std::chrono::milliseconds;
using Clock = LoopStalls::Clock;

namespace slurmtune::core {
std::ostream& operator<<(std::ostream& out, LoopWork work);  // for the test's messages
std::ostream& operator<<(std::ostream& out, LoopWork work) {
  return out << loop_work_names()[static_cast<std::size_t>(work)];
}
}  // namespace slurmtune::core

namespace {

Clock::time_point fake_now;
Clock::duration fake_cpu;  // the loop thread's CPU clock
Clock::time_point now() {
  return fake_now;
}
double cpu() {
  return std::chrono::duration<double>(fake_cpu).count();
}
void pass(milliseconds d) {  // with the loop's thread on the core
  fake_now += d;
  fake_cpu += d;
}
void pass_off_core(milliseconds d) {  // an interrupt, another thread or the host has it
  fake_now += d;
}

/// One turn: events take `events` (of which `scoped` in a scope of `work`), then the
/// periodic work takes `periodic`.
void turn(LoopStalls& stalls, milliseconds events, milliseconds periodic,
          LoopWork work = LoopWork::Messages, milliseconds scoped = milliseconds(0)) {
  const auto woke = fake_now;
  {
    const auto scope = stalls.measure(work);
    pass(scoped);
  }
  pass(events - scoped);
  stalls.periodic_begins(woke);
  pass(periodic);
  stalls.turn_ends();
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_longest_turn_is_kept_with_what_filled_it) {
  LoopStalls stalls(&now, &cpu);
  turn(stalls, milliseconds(2), milliseconds(1));
  turn(stalls, milliseconds(38), milliseconds(3), LoopWork::Decisions, milliseconds(30));
  turn(stalls, milliseconds(0), milliseconds(150));
  turn(stalls, milliseconds(1200), milliseconds(0), LoopWork::Suggestions, milliseconds(1100));
  turn(stalls, milliseconds(5), milliseconds(1));
  BOOST_TEST(stalls.longest_ms() == 1200.0);
  BOOST_TEST(
      stalls.summary() ==
      "loop: longest turn 1200.0 ms (suggestions 1100.0 ms, messages 100.0 ms; its thread "
      "ran 1200.0 ms of it); turns over 10 ms: 3 (0 of them with its thread on the core under "
      "half the turn), over 100 ms: 2, over 1 s: 1 (of 5)");
  BOOST_TEST(stalls.work_summary() ==
             "loop: busy 1.4 s of 1.4 s: messages 0.12 s, decisions 0.03 s, suggestions 1.1 s, "
             "periodic 0.16 s; turns up to 1 ms 0, 1-10 ms 2, 10-100 ms 1, 0.1-1 s 1, over 1 s 1");
}

BOOST_AUTO_TEST_CASE(nested_scopes_count_apart_and_the_rest_is_periodic) {
  LoopStalls stalls(&now, &cpu);
  const auto woke = fake_now;
  pass(milliseconds(4));  // a message read and checked
  stalls.periodic_begins(woke);
  {
    const auto launches = stalls.measure(LoopWork::Launches);
    pass(milliseconds(3));
    {
      const auto suggesting = stalls.measure(LoopWork::Suggestions);
      pass(milliseconds(20));
    }
    pass(milliseconds(2));
  }
  {
    const auto results = stalls.measure(LoopWork::Results);
    pass(milliseconds(6));
  }
  pass(milliseconds(1));  // timeouts
  stalls.turn_ends();
  BOOST_TEST(stalls.summary() ==
             "loop: longest turn 36.0 ms (suggestions 20.0 ms, results 6.0 ms, launches 5.0 ms, "
             "messages 4.0 ms, periodic 1.0 ms; its thread ran 36.0 ms of it); turns over 10 ms: 1 "
             "(0 of them with its thread on the core under half the turn), over 100 ms: 0, over "
             "1 s: 0 (of 1)");
  BOOST_TEST(stalls.take_window() == "longest loop turn 36.0 ms (suggestions)");
}

// A turn the loop's thread did not run for most of is the machine's: the summary says
// how much of the longest it ran, and how many long turns were mostly off the core.
BOOST_AUTO_TEST_CASE(turns_the_thread_did_not_run_are_told_apart) {
  LoopStalls stalls(&now, &cpu);
  auto woke = fake_now;
  pass(milliseconds(2));
  pass_off_core(milliseconds(40));  // the host held the virtual CPU
  pass(milliseconds(1));
  stalls.periodic_begins(woke);
  stalls.turn_ends();
  turn(stalls, milliseconds(30), milliseconds(0));  // worked through
  woke = fake_now;
  pass(milliseconds(8));
  pass_off_core(milliseconds(4));  // under half off the core: the loop's own turn
  stalls.periodic_begins(woke);
  stalls.turn_ends();
  BOOST_TEST(stalls.summary() ==
             "loop: longest turn 43.0 ms (messages 43.0 ms; its thread ran 3.0 ms of it); turns "
             "over 10 ms: 3 (1 of them with its thread on the core under half the turn), over 100 "
             "ms: 0, over 1 s: 0 (of 3)");
}

BOOST_AUTO_TEST_CASE(each_window_starts_anew) {
  LoopStalls stalls(&now, &cpu);
  turn(stalls, milliseconds(40), milliseconds(2));
  BOOST_TEST(stalls.take_window() == "longest loop turn 42.0 ms (messages)");
  turn(stalls, milliseconds(0), milliseconds(3));
  BOOST_TEST(stalls.take_window() == "longest loop turn 3.0 ms (periodic)");
  BOOST_TEST(stalls.take_window() == "longest loop turn 0.0 ms");
  BOOST_TEST(stalls.longest_ms() == 42.0);
}

BOOST_AUTO_TEST_CASE(the_recent_figures_forget_what_is_older_than_the_window) {
  LoopStalls stalls(&now, &cpu);
  turn(stalls, milliseconds(300), milliseconds(0), LoopWork::Exits, milliseconds(300));
  // Half busy for the next 50 s: turns of 50 ms, 50 ms apart.
  for (int i = 0; i < 500; ++i) {
    pass(milliseconds(50));
    turn(stalls, milliseconds(50), milliseconds(0), LoopWork::Decisions, milliseconds(40));
  }
  auto figures = stalls.figures();
  BOOST_TEST(figures.recent_longest_ms == 300.0);  // still within the last minute
  BOOST_TEST(figures.recent_work == LoopWork::Exits);
  BOOST_TEST(figures.longest_ms == 300.0);
  BOOST_TEST(figures.turns == 501u);
  BOOST_TEST(figures.over_10ms == 501u);
  BOOST_TEST(figures.over_100ms == 1u);
  BOOST_TEST(figures.over_1s == 0u);
  // Another 60 s of it: the 300 ms turn has left the window, not the session's figures.
  for (int i = 0; i < 600; ++i) {
    pass(milliseconds(50));
    turn(stalls, milliseconds(50), milliseconds(0), LoopWork::Decisions, milliseconds(40));
  }
  figures = stalls.figures();
  BOOST_TEST(figures.recent_longest_ms == 50.0);
  BOOST_TEST(figures.recent_work == LoopWork::Decisions);
  BOOST_TEST(figures.recent_busy == 0.5, boost::test_tools::tolerance(0.02));
  BOOST_TEST(figures.longest_ms == 300.0);
  BOOST_TEST(figures.longest_work == LoopWork::Exits);
}

BOOST_AUTO_TEST_CASE(no_turn_yet_is_all_zero) {
  const LoopStalls stalls(&now, &cpu);
  const auto figures = stalls.figures();
  BOOST_TEST(figures.turns == 0u);
  BOOST_TEST(figures.recent_longest_ms == 0.0);
  BOOST_TEST(figures.longest_ms == 0.0);
}
