// The coordinator's loop stalls: the longest turn and what filled it, the window the
// progress line shows, the turns past 10 ms, 100 ms and 1 s.
#define BOOST_TEST_MODULE runtime_loop_stalls
#include <boost/test/unit_test.hpp>

#include "runtime/coordinator/loop_stalls.hpp"

using namespace slurmtune::runtime;
using std::chrono::milliseconds;

BOOST_AUTO_TEST_CASE(the_longest_turn_is_kept_with_what_filled_it) {
  LoopStalls stalls;
  stalls.record(3, milliseconds(2), milliseconds(1));
  stalls.record(12, milliseconds(38), milliseconds(3));
  stalls.record(0, milliseconds(0), milliseconds(150));
  stalls.record(1, milliseconds(1200), milliseconds(0));
  stalls.record(2, milliseconds(5), milliseconds(1));
  BOOST_TEST(stalls.longest_ms() == 1200.0);
  BOOST_TEST(stalls.summary() ==
             "loop: longest turn 1200.0 ms (1 event(s) 1200.0 ms, periodic work 0.0 ms); turns "
             "over 10 ms: 3, over 100 ms: 2, over 1 s: 1 (of 5)");
}

BOOST_AUTO_TEST_CASE(each_window_starts_anew) {
  LoopStalls stalls;
  stalls.record(1, milliseconds(40), milliseconds(2));
  BOOST_TEST(stalls.take_window() == "longest loop turn 42.0 ms");
  stalls.record(1, milliseconds(3), milliseconds(0));
  BOOST_TEST(stalls.take_window() == "longest loop turn 3.0 ms");
  BOOST_TEST(stalls.take_window() == "longest loop turn 0.0 ms");
  BOOST_TEST(stalls.longest_ms() == 42.0);
}
