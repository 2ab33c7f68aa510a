// ProcessBackend at its edge: real trial processes from the local launcher, with a
// recording TrialHost in place of the coordinator. A clean exit, a failure with its
// stderr's last words, and an attempt the coordinator ends that ignores SIGTERM (killed
// after the kill grace); its resources come back each time. While messages wait, a turn
// makes one launch.
#define BOOST_TEST_MODULE runtime_process_backend
#include <sys/epoll.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "protocol/wire/secret.hpp"
#include "protocol/wire/unique_fd.hpp"
#include "runtime/backends/process_backend.hpp"
#include "runtime/backends/run_options.hpp"
#include "unit/runtime/backends/backend_testing.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
namespace fs = std::filesystem;

namespace {

const core::StudySpec& spec() {
  static const core::StudySpec s = testing::fifo_study(
      "edge", 3,
      R"(["sh", "-c", 'case $SLURMTUNE_TRIAL_ID in 0) exit 0;; 1) echo boom >&2; exit 3;; *) trap "" TERM; exec sleep 30;; esac'])");
  return s;
}

RunOptions local_options() {
  RunOptions options;
  options.kill_grace_s = 0.5;
  options.launch.launcher = "local";
  options.launch.slots = 4;
  return options;
}

// A ProcessBackend of `spec` on the local launcher's 4 slots, and what it works with.
struct LocalBackend {
  explicit LocalBackend(const core::StudySpec& spec)
      : server(loop, peers, protocol::generate_token(),
               ControlServerOptions{"127.0.0.1", 0, 10, 128}),
        launcher(make_launcher(spec.resources, options.launch)),
        quiet(spec),
        host(trials, quiet.controller, folder.path().string()),
        credentials(folder.file("credentials"), protocol::generate_token()),
        context{spec,
                options,
                quiet.controller,
                server,
                loop,
                stalls,
                *launcher,
                clock,
                trials,
                host,
                "127.0.0.1:1",
                credentials,
                folder.path().string(),
                ""},
        backend(context, false) {}

  // Reaps until `count` attempts have ended (20 s at most).
  void reap_until_ended(std::size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (host.ended.size() < count && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      backend.reap();
      backend.tick(trials.take_due(std::chrono::steady_clock::now()));
    }
  }

  testing::TempFolder folder{"slurmtune-process-backend"};
  EventLoop loop;
  testing::NoPeers peers;
  ControlServer server;
  const RunOptions options = local_options();
  std::unique_ptr<Launcher> launcher;
  testing::QuietController quiet;
  TrialTable trials;
  SessionClock clock;
  testing::RecordingHost host;
  const CredentialFiles credentials;
  LoopStalls stalls;
  const BackendContext context;
  ProcessBackend backend;
};

}  // namespace

BOOST_AUTO_TEST_CASE(trials_run_as_processes_and_their_ends_are_classified) {
  LocalBackend local(spec());
  ProcessBackend& backend = local.backend;
  TrialTable& trials = local.trials;
  const testing::RecordingHost& host = local.host;
  const auto& launcher = local.launcher;

  backend.begin();
  // max_trials, all at once on 4 slots: within a turn's 5 ms budget, or a few turns when
  // a loaded machine forks slowly (100 is a bound, not a timing check).
  for (int turn = 0; turn < 100 && trials.size() < 3U; ++turn)
    backend.fill();
  BOOST_TEST(trials.size() == 3U);
  ActiveTrial* stubborn = trials.find(2);
  BOOST_REQUIRE(stubborn);
  stubborn->fault = "time limit of 1.0 s exceeded";
  backend.end_attempt(*stubborn);  // SIGTERM now (ignored), SIGKILL after the kill grace

  local.reap_until_ended(3);
  BOOST_REQUIRE(host.ended.size() == 3U);
  std::map<core::TrialId, std::pair<bool, std::string>> ends;
  for (const auto& [trial, clean, error] : host.ended)
    ends[trial] = {clean, error};
  BOOST_TEST(ends.at(0).first);
  BOOST_TEST(ends.at(0).second.empty());
  BOOST_TEST(!ends.at(1).first);
  BOOST_TEST(ends.at(1).second == "exit status 3\nboom");
  BOOST_TEST(!ends.at(2).first);
  BOOST_TEST(ends.at(2).second == "time limit of 1.0 s exceeded; killed by signal 9 (SIGKILL)");
  BOOST_TEST(trials.empty());
  // Nothing is left to launch: the backend is done, and every slot is free again.
  backend.fill();
  BOOST_TEST(backend.done());
  std::size_t reserved = 0;
  while (launcher->reserve())
    ++reserved;
  BOOST_TEST(reserved == launcher->capacity());
}

// A decision costs a tenth of a millisecond, a launch several times that: while the
// loop's budget left ready connections (EventLoop::behind), a turn makes one launch,
// and the next turn launches the rest once nothing waits.
BOOST_AUTO_TEST_CASE(while_messages_wait_a_turn_makes_one_launch) {
  static const core::StudySpec quick = testing::fifo_study("yield", 3, R"(["true"])");
  LocalBackend local(quick);
  ProcessBackend& backend = local.backend;
  TrialTable& trials = local.trials;
  EventLoop& loop = local.loop;
  backend.begin();

  // Two messages wait; a turn with no budget handles one and leaves the other.
  std::vector<std::pair<protocol::UniqueFd, protocol::UniqueFd>> pipes;
  for (int k = 0; k < 2; ++k) {
    int fds[2];
    BOOST_REQUIRE(::pipe(fds) == 0);
    pipes.emplace_back(protocol::UniqueFd(fds[0]), protocol::UniqueFd(fds[1]));
    BOOST_REQUIRE(::write(fds[1], "x", 1) == 1);
    loop.add(fds[0], EPOLLIN, [](std::uint32_t) {});
  }
  BOOST_REQUIRE(loop.run_once(1000, std::chrono::steady_clock::duration::zero()) == 1);
  BOOST_REQUIRE(loop.behind());
  backend.fill();
  BOOST_TEST(trials.size() == 1U);
  BOOST_TEST(backend.more_to_fill());
  // Nothing waits any more: the rest go within the turn's 5 ms budget (a turn or a few
  // when a machine under load forks slowly; 100 is a bound, not a timing check).
  for (const auto& [read_end, write_end] : pipes)
    loop.remove(read_end.get());
  BOOST_REQUIRE(loop.run_once(0) == 0);
  BOOST_REQUIRE(!loop.behind());
  for (int turn = 0; turn < 100 && trials.size() < 3U; ++turn)
    backend.fill();
  BOOST_TEST(trials.size() == 3U);

  local.reap_until_ended(3);
  BOOST_TEST(local.host.ended.size() == 3U);
}
