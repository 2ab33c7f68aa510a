#define BOOST_TEST_MODULE runtime_job_clock
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "runtime/launch/job_clock.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
namespace fs = std::filesystem;

namespace {
// A stand-in for squeue with the given shell body, in a fresh folder.
struct FakeSqueue {
  explicit FakeSqueue(const std::string& body) {
    dir = fs::temp_directory_path() / ("slurmtune-job-clock-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    program = (dir / "squeue").string();
    std::ofstream(program) << "#!/bin/sh\n" << body << "\n";
    ::chmod(program.c_str(), 0700);
  }
  ~FakeSqueue() { fs::remove_all(dir); }
  std::string scratch() const { return (dir / "answer").string(); }
  fs::path dir;
  std::string program;
};
const std::map<std::string, std::string> kJob = {{"SLURM_JOB_ID", "42"}};
}  // namespace

BOOST_AUTO_TEST_CASE(outside_a_job_there_is_no_limit) {
  BOOST_TEST(!slurm_time_left({}, "/nonexistent/answer").seconds);
}

BOOST_AUTO_TEST_CASE(slurm_job_end_time_comes_first) {
  const auto end = static_cast<double>(std::time(nullptr)) + 600;
  const auto left = slurm_time_left(
      {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_END_TIME", std::to_string(static_cast<long>(end))}},
      "/nonexistent/answer", "/nonexistent/squeue");
  BOOST_REQUIRE(left.seconds);
  BOOST_TEST(*left.seconds > 590.0);
  BOOST_TEST(*left.seconds <= 600.0);
  BOOST_TEST(left.source == "SLURM_JOB_END_TIME");
}

BOOST_AUTO_TEST_CASE(squeue_answers_the_time_left) {
  const FakeSqueue squeue("echo 1:00:00");
  const auto left = slurm_time_left(kJob, squeue.scratch(), squeue.program);
  BOOST_REQUIRE(left.seconds);
  BOOST_TEST(*left.seconds == 3600.0);
  BOOST_TEST(left.source == "squeue");
}

BOOST_AUTO_TEST_CASE(a_job_without_a_limit_has_none) {
  const FakeSqueue squeue("echo UNLIMITED");
  const auto left = slurm_time_left(kJob, squeue.scratch(), squeue.program);
  BOOST_TEST(!left.seconds);
  BOOST_TEST(left.source == "squeue: no time limit (UNLIMITED)");
}

BOOST_AUTO_TEST_CASE(a_squeue_that_never_answers_is_given_up_on) {
  // A controller that does not answer must not stall the orchestrator's start: the
  // wait is bounded, and the stuck squeue is killed.
  const FakeSqueue squeue("exec sleep 600");
  const auto left = slurm_time_left(kJob, squeue.scratch(), squeue.program);
  BOOST_TEST(!left.seconds);
  BOOST_TEST(left.source == "squeue did not answer within 10 s");
}

BOOST_AUTO_TEST_CASE(a_missing_squeue_is_said) {
  const auto left = slurm_time_left(kJob, "/nonexistent/answer", "/nonexistent/squeue");
  BOOST_TEST(!left.seconds);
  BOOST_TEST(left.source.find("squeue did not start") == 0u);
}

BOOST_AUTO_TEST_CASE(a_session_without_a_known_end_holds_nothing_back) {
  SessionClock clock;
  BOOST_TEST(!clock.has_end());
  BOOST_TEST(!clock.usable_left_s());
  BOOST_TEST(!clock.fits_before_end());  // empty: next_launch treats all work as fitting
  BOOST_TEST(!clock.seconds_to_first_rung());
  clock.attempt_started(1, 0);  // bookkeeping is skipped, not refused
  clock.reported(1, 1, 1.0);
  clock.attempt_ended(1);
  BOOST_TEST(clock.elapsed_s() >= 0);
}

BOOST_AUTO_TEST_CASE(a_known_end_less_the_margin_bounds_the_work) {
  SessionClock clock;
  clock.set_end(1000, 300, 9);
  BOOST_TEST(clock.has_end());
  const double left = *clock.usable_left_s();
  BOOST_TEST(left <= 700);
  BOOST_TEST(left > 690);
  const auto fits = clock.fits_before_end();
  BOOST_REQUIRE(fits);
  BOOST_TEST(fits(0));  // nothing timed yet: everything fits
  BOOST_TEST(!clock.seconds_to_first_rung());

  SessionClock ended;
  ended.set_end(100, 300, 9);  // the margin is past the job's end already
  BOOST_TEST(*ended.usable_left_s() < 0);
}
