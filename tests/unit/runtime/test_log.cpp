// The coordinator's log (issue #41, item 5): text a trial controls (a metric name, a
// stderr tail) can neither forge a line nor drive the terminal, and a 60 KB name is not
// logged whole.
#define BOOST_TEST_MODULE runtime_log
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

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

namespace {

// stderr into a file while it lives; what was written so far by written().
class CapturedStderr {
 public:
  CapturedStderr() : folder_("log-batch"), path_((folder_.path() / "stderr").string()) {
    std::fflush(stderr);
    BOOST_REQUIRE(std::freopen(path_.c_str(), "w", stderr) != nullptr);
  }
  ~CapturedStderr() { std::freopen("/dev/null", "w", stderr); }
  CapturedStderr(const CapturedStderr&) = delete;
  CapturedStderr& operator=(const CapturedStderr&) = delete;
  std::string written() const {
    std::fflush(stderr);
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  slurmtune::testing::TempFolder folder_;
  std::string path_;
};

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_log_batch_writes_its_lines_when_the_last_batch_ends) {
  const CapturedStderr captured;
  {
    const LogBatch turn;
    log_line("first");
    {
      const LogBatch nested;
      log_line("second");
    }
    BOOST_TEST(captured.written().empty(), "the outer batch still holds its lines");
    std::thread other([] { log_line("from another thread"); });
    other.join();
    BOOST_TEST(captured.written().empty());
  }
  const std::string written = captured.written();
  BOOST_TEST(count_of(written, "[slurmtune ") == 3u, written);
  const auto first = written.find("] first\n"), second = written.find("] second\n");
  const auto other = written.find("] from another thread\n");
  BOOST_TEST((first < second && second < other && other != std::string::npos), written);
  log_line("after the batch");  // no batch: written at once
  BOOST_TEST(captured.written().find("] after the batch\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_log_batch_past_its_bound_is_written_at_once) {
  const CapturedStderr captured;
  const LogBatch turn;
  const std::string message(1000, 'x');
  std::size_t lines = 0;
  while (captured.written().empty()) {
    log_line(message);
    ++lines;
    BOOST_REQUIRE(lines * message.size() <= 2 * kMaxBatchedLog);
  }
  BOOST_TEST(lines * (message.size() + 22) >= kMaxBatchedLog);  // "[slurmtune hh:mm:ss] ", \n
  BOOST_TEST(count_of(captured.written(), "[slurmtune ") == lines);
}
