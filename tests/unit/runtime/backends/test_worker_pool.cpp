// WorkerPool at its edge: a real `slurmtune worker` of a joined job (a child process of
// this test) finds the control plane through the address file next to the results file,
// authenticates both ways, brings its node into the ledger, starts a trial on LAUNCH and
// says how it ended (EXITED); its job's end (SIGUSR1: LEAVING) takes the node out, and
// the end of the study lets it go.
#define BOOST_TEST_MODULE runtime_worker_pool
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "protocol/credentials.hpp"
#include "protocol/wire/secret.hpp"
#include "runtime/backends/run_options.hpp"
#include "runtime/backends/worker_pool.hpp"
#include "runtime/study_paths.hpp"
#include "unit/runtime/backends/backend_testing.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
namespace fs = std::filesystem;

namespace {

const core::StudySpec& spec() {
  static const core::StudySpec s = testing::fifo_study("pool", 4, R"(["true"])");
  return s;
}

// Stands in for the coordinator: the pool's peers go to the pool.
struct PoolPeers final : ControlHandler {
  WorkerPool* pool = nullptr;
  std::string on_hello(ConnectionId id, const protocol::HelloFrom& hello) override {
    if (const auto* joined = std::get_if<protocol::JoinedHello>(&hello))
      return pool->on_hello(id, *joined);
    throw protocol::ProtocolError("only a joined job's worker is expected here");
  }
  std::optional<Reply> on_message(ConnectionId id, protocol::MessageType type,
                                  const protocol::JsonObject& body) override {
    return pool->on_message(id, type, body);
  }
  void on_closed(ConnectionId id, const std::string& reason) override {
    if (pool->owns(id)) pool->on_closed(id, reason);
  }
};

struct NoHost final : TrialHost {
  ActiveTrial& register_trial(const core::TrialLaunch&, TrialResources) override {
    throw std::logic_error("not used");
  }
  std::map<std::string, std::string> trial_environment(const ActiveTrial&) const override {
    return {};
  }
  core::ExitMeaning end_trial(core::TrialId, bool, const std::string&) override {
    throw std::logic_error("not used");
  }
  void nothing_to_launch() override {}
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_joined_jobs_worker_serves_its_node_until_its_job_leaves) {
  testing::TempFolder folder("slurmtune-worker-pool");
  const std::string results = folder.file("study.h5");
  fs::create_directories(trials_dir_of(results));
  const std::string token = protocol::generate_token();
  protocol::write_token_file(token_file_of(results), token);

  EventLoop loop;
  PoolPeers peers;
  ControlServer server(loop, peers, token, ControlServerOptions{"127.0.0.1", 0, 10, 128});
  std::ofstream(address_file_of(results)) << "127.0.0.1:" << server.port() << "\n";
  RunOptions options;
  options.launch.launcher = "local";
  options.launch.slots = 1;
  options.end_margin_s = 0;
  const auto launcher = make_launcher(spec().resources, options.launch);
  testing::QuietController quiet(spec());
  core::StudyController& controller = quiet.controller;
  TrialTable trials;
  SessionClock clock;
  NoHost host;
  const CredentialFiles credentials(credentials_dir_of(results), token);
  LoopStalls stalls;
  const BackendContext context{spec(),
                               options,
                               controller,
                               server,
                               loop,
                               stalls,
                               *launcher,
                               clock,
                               trials,
                               host,
                               "",
                               credentials,
                               trials_dir_of(results),
                               ""};
  bool study_done = false;
  std::vector<core::TrialId> finished;
  StepCancels step_cancels;
  WorkerPool pool(
      context, [&finished](core::TrialId trial) { finished.push_back(trial); }, study_done,
      step_cancels);
  peers.pool = &pool;

  // The local launcher's own node is node 0; the joined one comes in as node 1.
  const std::size_t joined_node = 1;
  ChildProcess worker = ChildProcess::spawn(
      SpawnRequest{{SLURMTUNE_BINARY, "worker", "--study", results, "--allocation", "42", "--node",
                    "m1", "--cpus", "2", "--reconnect-timeout", "5"},
                   {{"SLURM_JOB_ID", ""}},
                   {},
                   folder.file("worker.out"),
                   folder.file("worker.err"),
                   false});
  const auto pump_until = [&](const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      loop.run_once(20);
      pool.tick();
    }
    return done();
  };
  BOOST_REQUIRE(pump_until([&] { return pool.serves(joined_node); }));

  // A trial on the joined node: LAUNCH to its worker, EXITED back. The worker writes the
  // attempt's credential, derived from what it holds (a joined job's: the secret).
  auto attempt = std::make_unique<ActiveTrial>();
  attempt->trial = 7;
  attempt->launch = 5;
  attempt->dir = folder.file("trial-7");
  fs::create_directories(attempt->dir);
  attempt->placement = TrialResources{{joined_node}, "m1", {}};
  ActiveTrial& t = trials.add(std::move(attempt));
  TrialProcessSpec process;
  process.trial = 7;
  process.argv = {"sh", "-c", "cat \"$SLURMTUNE_TOKEN_FILE\" > \"$0\"; exit 3",
                  t.dir + "/token.txt"};
  process.stdout_path = t.dir + "/stdout.log";
  process.stderr_path = t.dir + "/stderr.log";
  t.process = pool.start(t, process);
  BOOST_REQUIRE(pump_until([&] { return !finished.empty(); }));
  BOOST_TEST(finished == std::vector<core::TrialId>{7});
  BOOST_TEST(t.process.status()->describe() == "exit status 3");
  BOOST_TEST(t.credential_host.empty());
  std::ifstream written(t.dir + "/token.txt");
  std::string credential;
  written >> credential;
  BOOST_TEST(credential == protocol::attempt_credential(token, 7, 0, 5));
  trials.erase(7);

  // Its job's time-limit warning: the worker says LEAVING, and the node takes no trial.
  const auto joined_node_usable = [&] {
    std::vector<TrialResources> held;
    bool on_joined = false;
    while (auto placement = launcher->reserve()) {
      on_joined = on_joined || placement->nodes.front() == joined_node;
      held.push_back(*placement);
    }
    for (const auto& placement : held)
      launcher->release(placement);
    return on_joined;
  };
  BOOST_TEST(joined_node_usable());
  worker.signal_group(SIGUSR1);
  BOOST_REQUIRE(pump_until([&] { return !joined_node_usable(); }));

  // The study is over: the worker is told so and exits cleanly.
  study_done = true;
  pool.stop(true);
  BOOST_REQUIRE(pump_until([&] { return worker.poll().has_value(); }));
  BOOST_TEST(worker.status()->describe() == "exit status 0");
}
