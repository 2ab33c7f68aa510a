// Slurm step cancels off the loop (runtime/launch/step_cancels.hpp): `scancel` is started
// and not waited for, at most kAtOnce at once with the rest in line, each ended past its
// wait limit, and finish() waits for all within a bound. The command here is a script
// that records its arguments and waits for a file, so the test decides when each ends;
// the real scancel against a real step is run.slurm.workers-ranks-kill's.
#define BOOST_TEST_MODULE runtime_step_cancels
#include <sys/stat.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "runtime/launch/step_cancels.hpp"
#include "unit/temp_folder.hpp"

using slurmtune::runtime::StepCancels;
using slurmtune::testing::TempFolder;
using namespace std::chrono_literals;

namespace {

// A stand-in for scancel in `folder`: appends its arguments to `calls`, then waits for
// `go` to exist (at most 60 s, so nothing outlives a failed test for long).
std::string fake_scancel(const TempFolder& folder) {
  std::string path = folder.file("scancel");
  std::ofstream(path) << "#!/bin/sh\necho \"$@\" >> " << folder.file("calls") << "\n"
                      << "i=0; while [ ! -e " << folder.file("go") << " ] && [ $i -lt 1200 ]; "
                      << "do sleep 0.05; i=$((i+1)); done\n";
  ::chmod(path.c_str(), 0700);
  return path;
}

std::string read(const std::string& path) {
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

std::size_t lines(const std::string& path) {
  const std::string text = read(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Polls until nothing is pending (at most 30 s).
void poll_until_done(StepCancels& cancels) {
  for (int i = 0; i < 3000 && cancels.pending() > 0; ++i) {
    cancels.poll();
    std::this_thread::sleep_for(10ms);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(cancels_run_without_waiting_a_bounded_number_at_once) {
  TempFolder folder;
  StepCancels cancels(fake_scancel(folder));
  for (int step = 0; step < 10; ++step)
    cancels.cancel("41." + std::to_string(step));
  // Every script waits for "go", and cancel() returned: nothing waited for them.
  BOOST_TEST(cancels.pending() == 10u);
  BOOST_TEST(cancels.asked() == 10u);
  for (int i = 0; i < 500 && lines(folder.file("calls")) < StepCancels::kAtOnce; ++i)
    std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(100ms);  // the two in line have not started
  BOOST_TEST(lines(folder.file("calls")) == StepCancels::kAtOnce);
  std::ofstream(folder.file("go")).flush();
  poll_until_done(cancels);
  BOOST_TEST(cancels.pending() == 0u);
  const std::string calls = read(folder.file("calls"));
  for (int step = 0; step < 10; ++step)
    BOOST_TEST(calls.find("--signal=KILL 41." + std::to_string(step) + "\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_scancel_past_its_wait_limit_is_ended) {
  TempFolder folder;
  StepCancels cancels(fake_scancel(folder));  // "go" never comes
  const auto t0 = std::chrono::steady_clock::now();
  cancels.cancel("7.3", t0);
  cancels.poll(t0 + StepCancels::kWaitLimit - 1s);
  BOOST_TEST(cancels.pending() == 1u);
  cancels.poll(t0 + StepCancels::kWaitLimit);
  BOOST_TEST(cancels.pending() == 0u);
}

BOOST_AUTO_TEST_CASE(a_missing_scancel_is_said_and_nothing_waits) {
  TempFolder folder;
  StepCancels cancels(folder.file("no-such-scancel"));
  cancels.cancel("7.3");
  BOOST_TEST(cancels.pending() == 0u);
}

BOOST_AUTO_TEST_CASE(finish_waits_for_those_running_and_in_line) {
  TempFolder folder;
  StepCancels cancels(fake_scancel(folder));
  std::ofstream(folder.file("go")).flush();  // each ends at once
  for (int step = 0; step < 12; ++step)
    cancels.cancel("9." + std::to_string(step));
  cancels.finish();
  BOOST_TEST(cancels.pending() == 0u);
  BOOST_TEST(lines(folder.file("calls")) == 12u);
}

BOOST_AUTO_TEST_CASE(finish_ends_at_its_bound_when_scancel_hangs) {
  TempFolder folder;
  StepCancels cancels(fake_scancel(folder), 300ms);  // "go" never comes
  for (int step = 0; step < 10; ++step)              // 8 running, 2 in line
    cancels.cancel("5." + std::to_string(step));
  // Ends at its bound: the scripts would wait a minute for "go", the two in line for ever.
  cancels.finish();
  BOOST_TEST(cancels.pending() == 0u);
}
