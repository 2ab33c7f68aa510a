// The step launch rate (runtime/launch/launch_rate.hpp): a token bucket of `per_second`
// launches a second, a burst of as many (at least one) after a pause.
#define BOOST_TEST_MODULE runtime_launch_rate
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <limits>

#include "core/error.hpp"
#include "runtime/launch/launch_rate.hpp"

using slurmtune::runtime::LaunchRate;
using namespace std::chrono_literals;

namespace {

// Launches the rate lets through at `now`, taking each.
int launches(LaunchRate& rate, LaunchRate::Clock::time_point now) {
  int n = 0;
  while (rate.allows(now)) {
    rate.take();
    ++n;
  }
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_burst_then_the_rate) {
  LaunchRate rate(50);
  const LaunchRate::Clock::time_point t0{};
  BOOST_TEST(launches(rate, t0) == 50);  // a burst of one second's worth
  BOOST_TEST(launches(rate, t0 + 10ms) == 0);
  BOOST_TEST(launches(rate, t0 + 110ms) == 5);    // 50 a second
  BOOST_TEST(launches(rate, t0 + 1h) == 50);      // a pause refills the burst, no more
  BOOST_TEST(launches(rate, t0 + 1h - 1s) == 0);  // a clock that steps back gives nothing
}

BOOST_AUTO_TEST_CASE(a_rate_under_one_a_second_still_launches) {
  LaunchRate rate(0.5);
  const LaunchRate::Clock::time_point t0{};
  BOOST_TEST(launches(rate, t0) == 1);
  BOOST_TEST(launches(rate, t0 + 1s) == 0);
  BOOST_TEST(launches(rate, t0 + 2s) == 1);
}

BOOST_AUTO_TEST_CASE(a_rate_must_be_positive) {
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::infinity()})
    BOOST_CHECK_THROW(LaunchRate{bad}, slurmtune::UsageError);
}
