#define BOOST_TEST_MODULE runtime_progress_report
#include <boost/test/unit_test.hpp>
#include <string>
#include <utility>
#include <vector>

#include "runtime/coordinator/progress_report.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;

BOOST_AUTO_TEST_CASE(only_trials_silent_past_the_threshold_are_named) {
  const ProgressReport report(30, 300);
  BOOST_TEST(report.silent_trials({}).empty());
  BOOST_TEST(report.silent_trials({{1, 10}, {2, 299.4}}).empty());
  BOOST_TEST(report.silent_trials({{3, 312.2}, {4, 20}, {9, 305}}) ==
             "; silent: trial 3 (312 s), trial 9 (305 s)");
}

BOOST_AUTO_TEST_CASE(at_most_five_are_named_and_the_rest_counted) {
  const ProgressReport report(30, 60);
  std::vector<std::pair<slurmtune::core::TrialId, double>> quiet;
  for (slurmtune::core::TrialId id = 1; id <= 8; ++id)
    quiet.emplace_back(id, 100);
  BOOST_TEST(report.silent_trials(quiet) ==
             "; silent: trial 1 (100 s), trial 2 (100 s), trial 3 (100 s), trial 4 (100 s), trial "
             "5 (100 s) and 3 more");
}

BOOST_AUTO_TEST_CASE(a_line_is_due_once_the_interval_has_passed) {
  BOOST_TEST(ProgressReport(0, 300).due());
  BOOST_TEST(!ProgressReport(3600, 300).due());
}
