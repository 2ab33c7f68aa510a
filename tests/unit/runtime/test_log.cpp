// The coordinator's log (issue #41, item 5): text a trial controls (a metric name, a
// stderr tail) can neither forge a line nor drive the terminal, and a 60 KB name is not
// logged whole.
#define BOOST_TEST_MODULE runtime_log
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/log.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;

BOOST_AUTO_TEST_CASE(loggable_text_cannot_forge_lines_or_drive_the_terminal) {
  BOOST_TEST(loggable("trial 3 failed") == "trial 3 failed");
  BOOST_TEST(loggable("REPORT: metric 'x\n[slurmtune 12:00:00] trial 9 completed'") ==
             "REPORT: metric 'x\n    [slurmtune 12:00:00] trial 9 completed'");
  BOOST_TEST(loggable("loss\x1b[31mred\x1b[0m") == "loss\\u001B[31mred\\u001B[0m");
  BOOST_TEST(loggable("a\rb\x7f") == "a\\u000Db\\u007F");
  const std::string huge(60000, 'n');
  const std::string cut = loggable(huge);
  BOOST_TEST(cut.size() <= kMaxLogMessage);
  BOOST_TEST(cut.substr(cut.size() - 3) == "\xE2\x80\xA6");
}

BOOST_AUTO_TEST_CASE(log_line_writes_what_loggable_makes_of_a_message) {
  slurmtune::testing::TempFolder folder("log");
  const std::string path = (folder.path() / "stderr").string();
  std::fflush(stderr);
  FILE* saved = std::freopen(path.c_str(), "w", stderr);
  BOOST_REQUIRE(saved != nullptr);
  log_line("metric 'a\nb\x1b[2J'");
  std::fflush(stderr);
  std::freopen("/dev/null", "w", stderr);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string written = text.str();
  BOOST_TEST(written.find("] metric 'a\n    b\\u001B[2J'\n") != std::string::npos, written);
  BOOST_TEST(written.find('\x1b') == std::string::npos);
}
