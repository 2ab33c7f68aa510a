#define BOOST_TEST_MODULE core_device_pool
#include <boost/test/unit_test.hpp>

#include "core/error.hpp"
#include "core/placement/device_pool.hpp"

using namespace slurmtune;
using namespace slurmtune::core;
using Devices = std::vector<std::string>;

BOOST_AUTO_TEST_CASE(trials_get_distinct_devices_until_none_is_free) {
  DevicePool pool({"0", "1", "2"}, 1);
  BOOST_TEST(*pool.acquire(1) == Devices{"0"}, boost::test_tools::per_element());
  BOOST_TEST(*pool.acquire(2) == Devices({"1", "2"}), boost::test_tools::per_element());
  BOOST_TEST(!pool.acquire(1));
  pool.release({"1", "2"});
  BOOST_TEST(!pool.acquire(3));  // "0" is still taken
  BOOST_TEST(*pool.acquire(2) == Devices({"1", "2"}), boost::test_tools::per_element());
  BOOST_TEST(pool.acquire(0)->empty());
}

BOOST_AUTO_TEST_CASE(shared_devices_go_to_the_least_used_first) {
  DevicePool pool({"GPU-a", "GPU-b"}, 2);
  BOOST_TEST(*pool.acquire(1) == Devices{"GPU-a"}, boost::test_tools::per_element());
  BOOST_TEST(*pool.acquire(1) == Devices{"GPU-b"}, boost::test_tools::per_element());
  // Each device has one share left: a 2-GPU trial still fits, on both.
  BOOST_TEST(*pool.acquire(2) == Devices({"GPU-a", "GPU-b"}), boost::test_tools::per_element());
  BOOST_TEST(!pool.acquire(1));
}

BOOST_AUTO_TEST_CASE(a_trial_never_gets_one_device_twice) {
  DevicePool pool({"0"}, 4);
  BOOST_TEST(!pool.acquire(2));
  BOOST_TEST(*pool.acquire(1) == Devices{"0"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bad_device_lists_and_releases_are_refused) {
  BOOST_CHECK_THROW(DevicePool({"0", "0"}, 1), InputError);
  BOOST_CHECK_THROW(DevicePool({"0", ""}, 1), InputError);
  BOOST_CHECK_THROW(DevicePool({"0"}, 0), InputError);
  DevicePool pool({"0"}, 1);
  BOOST_CHECK_THROW(pool.release({"0"}), UsageError);
  BOOST_CHECK_THROW(pool.release({"7"}), UsageError);
  BOOST_TEST(join_devices({"0", "3"}) == "0,3");
}
