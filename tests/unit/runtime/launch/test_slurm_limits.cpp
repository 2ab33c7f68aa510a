#define BOOST_TEST_MODULE runtime_slurm_limits
#include <boost/test/unit_test.hpp>

#include "runtime/launch/slurm_limits.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;

BOOST_AUTO_TEST_CASE(max_step_count_is_read_from_scontrol_show_config) {
  const std::string config =
      "Configuration data as of 2026-11-23T12:00:00\n"
      "MaxJobCount             = 10000\n"
      "MaxStepCount            = 40000\n"
      "MaxTasksPerNode         = 512\n";
  BOOST_TEST(*parse_max_step_count(config) == 40000);
  BOOST_TEST(!parse_max_step_count("MaxJobCount = 5\n"));
  BOOST_TEST(!parse_max_step_count("MaxStepCount = lots\n"));
}

BOOST_AUTO_TEST_CASE(a_study_of_more_trials_than_steps_is_warned_of) {
  BOOST_TEST(step_count_warning(39999, 40000).empty());
  const std::string warning = step_count_warning(100000, 40000);
  BOOST_TEST(warning.find("MaxStepCount is 40000") != std::string::npos);
  BOOST_TEST(warning.find("launch = \"worker\"") != std::string::npos);
}
