#define BOOST_TEST_MODULE core_allocation_clock
#include <boost/test/unit_test.hpp>

#include "core/study/allocation_clock.hpp"

using namespace slurmtune::core;

BOOST_AUTO_TEST_CASE(nothing_is_held_before_a_step_was_timed) {
  const AllocationClock clock(27);
  BOOST_TEST(!clock.seconds_to_next_milestone(0));
  BOOST_TEST(clock.fits(0, 1.0));
  BOOST_TEST(clock.next_milestone(0) == 27.0);
}

BOOST_AUTO_TEST_CASE(startup_and_pace_come_from_the_reports) {
  AllocationClock clock(27);
  // Launched at 100 s; 10 s of start-up, then 2 s per step; rungs at 1 and 3.
  clock.attempt_started(0, 0, 100);
  clock.reported(0, 1, 112, 1.0);
  clock.reported(0, 2, 114, std::nullopt);
  clock.reported(0, 3, 116, 3.0);
  clock.attempt_ended(0);
  clock.attempt_started(1, 0, 200);
  clock.reported(1, 1, 212, 1.0);
  BOOST_TEST(clock.next_milestone(0) == 1.0);
  BOOST_TEST(clock.next_milestone(1) == 3.0);
  BOOST_TEST(clock.next_milestone(3) == 27.0);
  // A new trial: start-up (10 s, the first step counted at the pace) + 1 step.
  BOOST_TEST(*clock.seconds_to_next_milestone(0) == 12.0);
  // A promoted trial at step 3: start-up + 24 steps to max_t.
  BOOST_TEST(*clock.seconds_to_next_milestone(3) == 10.0 + 2.0 * 24);
  BOOST_TEST(clock.fits(0, 12.0));
  BOOST_TEST(!clock.fits(0, 11.9));
  BOOST_TEST(!clock.fits(3, 40));
}

BOOST_AUTO_TEST_CASE(milestones_never_lie_past_the_end) {
  AllocationClock clock(9);
  clock.attempt_started(0, 0, 0);
  clock.reported(0, 1, 1, 27.0);  // a rung of another bracket beyond max_t
  BOOST_TEST(clock.next_milestone(5) == 9.0);
}

BOOST_AUTO_TEST_CASE(slurm_time_left_forms) {
  BOOST_TEST(*parse_slurm_time_left("59:23") == 59 * 60 + 23.0);
  BOOST_TEST(*parse_slurm_time_left("1:00:00\n") == 3600.0);
  BOOST_TEST(*parse_slurm_time_left("2-03:04:05") == 2 * 86400 + 3 * 3600 + 4 * 60 + 5.0);
  BOOST_TEST(*parse_slurm_time_left("2-03") == 2 * 86400 + 3 * 3600.0);
  BOOST_TEST(*parse_slurm_time_left("1-00:30") == 86400 + 1800.0);
  for (const char* none : {"UNLIMITED", "NOT_SET", "INVALID", "", "12", "1:2:3:4", "-1:00", "a:b"})
    BOOST_TEST(!parse_slurm_time_left(none), none);
}
