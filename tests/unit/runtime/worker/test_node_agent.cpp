// The node agent's socket folder: made private (0700) and locked while the agent lives,
// removed with it, and, when its agent was killed outright and could not remove it, by
// the next agent on the node; a live agent's folder and other folders are left alone.
#define BOOST_TEST_MODULE runtime_node_agent
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "protocol/wire/unique_fd.hpp"
#include "runtime/worker/node_agent.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
namespace fs = std::filesystem;

namespace {

// TMPDIR set to `folder` while it lives: where agents make their folders.
struct TmpdirIs {
  explicit TmpdirIs(const fs::path& folder) { ::setenv("TMPDIR", folder.c_str(), 1); }
  ~TmpdirIs() { ::unsetenv("TMPDIR"); }
  TmpdirIs(const TmpdirIs&) = delete;
  TmpdirIs& operator=(const TmpdirIs&) = delete;
};

NodeAgent make_agent(EventLoop& loop) {
  return NodeAgent(
      loop, [](const std::string&) {}, [](core::TrialId) { return false; });
}

// A folder as an agent leaves it when it is killed: its socket and its (unlocked) lock.
fs::path dead_agents_folder(const fs::path& base, const std::string& suffix) {
  const fs::path folder = base / ("slurmtune-agent-" + suffix);
  fs::create_directory(folder);
  fs::permissions(folder, fs::perms::owner_all);
  std::ofstream(folder / "agent.sock");
  std::ofstream(folder / "agent.lock");
  return folder;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_dead_agents_folder_goes_when_the_next_agent_starts) {
  testing::TempFolder tmp("slurmtune-agents");
  const TmpdirIs tmpdir(tmp.path());
  const fs::path dead = dead_agents_folder(tmp.path(), "dead01");
  // Alive: its lock is held (here, by an open file description of this process).
  const fs::path alive = dead_agents_folder(tmp.path(), "alive1");
  const protocol::UniqueFd held(::open((alive / "agent.lock").c_str(), O_RDONLY | O_CLOEXEC));
  BOOST_REQUIRE(held && ::flock(held.get(), LOCK_EX) == 0);
  // Being made (no lock yet), and folders that are not an agent's.
  fs::create_directory(tmp.path() / "slurmtune-agent-making");
  fs::create_directory(tmp.path() / "other");
  std::ofstream(tmp.path() / "other" / "agent.lock");

  EventLoop loop;
  std::string address;
  {
    const NodeAgent agent = make_agent(loop);
    address = agent.address();
    const fs::path own = fs::path(address.substr(5)).parent_path();
    BOOST_TEST(!fs::exists(dead));
    BOOST_TEST(fs::exists(alive));
    BOOST_TEST(fs::exists(tmp.path() / "slurmtune-agent-making"));
    BOOST_TEST(fs::exists(tmp.path() / "other" / "agent.lock"));
    struct stat info {};
    BOOST_REQUIRE(::stat(own.c_str(), &info) == 0);
    BOOST_TEST((info.st_mode & 0777) == 0700u);
    // Its own lock is held: an agent starting beside it leaves its folder alone.
    const NodeAgent second = make_agent(loop);
    BOOST_TEST(fs::exists(own / "agent.lock"));
    BOOST_TEST(fs::exists(own / "agent.sock"));
  }
  BOOST_TEST(!fs::exists(fs::path(address.substr(5)).parent_path()));  // removed with it
}
