// A trial's stderr.log is bounded (issue #41, item 18): past the cap its end is kept in
// stderr.log.1 and the file is emptied under the trial, whose appends land at its start.
#define BOOST_TEST_MODULE runtime_stderr_cap
#include <fcntl.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/attempts/stderr_cap.hpp"
#include "runtime/attempts/trial_table.hpp"
#include "runtime/control/background_work.hpp"
#include "runtime/control/event_loop.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
namespace fs = std::filesystem;

namespace {
std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

BOOST_AUTO_TEST_CASE(keeps_the_end_and_empties_the_file_under_its_writer) {
  slurmtune::testing::TempFolder folder("stderr-cap");
  const std::string path = (folder.path() / "stderr.log").string();
  // The trial's side: a descriptor opened as ChildProcess opens it (O_APPEND).
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  BOOST_REQUIRE(fd >= 0);
  std::string written;
  for (int i = 0; i < 5000; ++i)
    written += "line " + std::to_string(i) + " of a chatty trial\n";
  BOOST_REQUIRE(::write(fd, written.data(), written.size()) ==
                static_cast<ssize_t>(written.size()));
  BOOST_TEST(!cap_stderr_log(path, written.size(), 1000));  // at the cap: left alone
  BOOST_TEST(cap_stderr_log(path, 10000, 1000));
  BOOST_TEST(fs::file_size(path) == 0U);
  BOOST_TEST(read_all(path + ".1") == written.substr(written.size() - 1000));
  const std::string more = "Traceback: the end\n";
  BOOST_REQUIRE(::write(fd, more.data(), more.size()) == static_cast<ssize_t>(more.size()));
  ::close(fd);
  BOOST_TEST(read_all(path) == more);  // at the start: no hole where the old text was
  BOOST_TEST(!cap_stderr_log((folder.path() / "absent.log").string(), 10, 1));
}

// The coordinator looks at a bounded number of files a second, in turn and on its helper
// thread (a stat of every running trial's file each second stalls the loop on a parallel
// file system): every file is looked at within ceil(running / budget) checks, the walk
// wrapping around.
BOOST_AUTO_TEST_CASE(files_are_looked_at_in_turn_a_bounded_number_a_check) {
  slurmtune::testing::TempFolder folder("stderr-caps");
  TrialTable trials;
  const std::string chatter(100, 'x');
  for (core::TrialId id : {2, 4, 6, 8, 10}) {
    auto t = std::make_unique<ActiveTrial>();
    t->trial = id;
    t->stderr_path = (folder.path() / ("stderr-" + std::to_string(id) + ".log")).string();
    std::ofstream(t->stderr_path) << chatter;
    t->stderr_offset = 50;
    trials.add(std::move(t));
  }
  const auto capped = [&] {
    std::vector<core::TrialId> ids;
    for (const auto& [id, t] : trials)
      if (fs::file_size(t->stderr_path) == 0) ids.push_back(id);
    return ids;
  };
  EventLoop loop;
  BackgroundWork work(loop);
  StderrCaps caps(10, 5);
  const auto check = [&](std::size_t budget) {
    caps.check(trials, work, budget);
    work.drain();  // the files are looked at on the helper thread
  };
  check(2);
  BOOST_TEST(capped() == (std::vector<core::TrialId>{2, 4}));
  BOOST_TEST(trials.find(2)->stderr_offset == 0U);  // its tail is read from the new start
  BOOST_TEST(trials.find(6)->stderr_offset == 50U);
  trials.erase(6);  // an attempt that ended between two checks is skipped, not waited for
  check(2);
  BOOST_TEST(capped() == (std::vector<core::TrialId>{2, 4, 8, 10}));
  std::ofstream(trials.find(2)->stderr_path) << chatter;  // full again
  check(2);                                               // wraps around to the start
  BOOST_TEST(capped() == (std::vector<core::TrialId>{2, 4, 8, 10}));
  BOOST_TEST(read_all(trials.find(2)->stderr_path + ".1") == chatter.substr(95));
  check(100);  // a budget above the running count looks at each once
  BOOST_TEST(capped().size() == 4U);
}
