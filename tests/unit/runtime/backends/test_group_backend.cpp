// GroupBackend at its edge: a real MPI step (mpirun, 2 ranks) of the C++ trial API's
// run_trials (tests/run/trials/group_trial.cpp) splits into 2 trial groups of 1 rank. Each
// group finds the control plane, says HELLO as a group, asks for work (NEXT), gets its
// trials one after another (ASSIGN), reports on its connection and says how each ended
// (TRIAL_END); the trial that fails its first attempt is retried; at the study's end
// every group hears so and the step exits cleanly. The host (the coordinator's part: the
// trial table, the controller's verdicts) is a small stand-in here.
#define BOOST_TEST_MODULE runtime_group_backend
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "protocol/trial_messages.hpp"
#include "protocol/wire/secret.hpp"
#include "runtime/backends/group_backend.hpp"
#include "runtime/backends/run_options.hpp"
#include "runtime/study_paths.hpp"
#include "unit/runtime/backends/backend_testing.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
namespace fs = std::filesystem;

namespace {

const core::StudySpec& spec() {
  static const core::StudySpec s = config::parse_study(
      "[study]\nname = \"groups\"\nmetric = \"loss\"\n"
      "metrics = [\"loss\", \"ranks\", \"mixed\", \"torch_ok\", \"start\"]\nmax_trials = 4\n"
      "[search]\nx = { uniform = [0, 1] }\n[scheduler]\ntype = \"fifo\"\n"
      "[trial]\nmode = \"mpi\"\nprogram = [\"" GROUP_TRIAL
      "\", \"--sleep-ms=10\"]\n"
      "max_failures = 2\n[resources]\nranks_per_trial = 1\n",
      "groups.toml");
  return s;
}

// How each trial ended, as the controller told the results file.
struct Ends final : core::StudyObserver {
  std::map<core::TrialId, core::TrialEnd> ended;
  std::map<core::TrialId, int> retried;
  void trial_ended(core::TrialId trial, core::TrialEnd how, const std::string&) override {
    ended[trial] = how;
  }
  void trial_retried(core::TrialId trial, const std::string&) override { ++retried[trial]; }
};

// A group's connection goes to the backend (HELLO, NEXT, TRIAL_END); the REPORTs of the
// trial it runs are answered here with the controller's verdict, as the coordinator
// answers them (it takes a trial's messages from whichever connection carries them).
struct Peers final : ControlHandler {
  LaunchBackend* backend = nullptr;
  core::StudyController* controller = nullptr;
  std::optional<Reply> report(core::TrialId trial, const protocol::JsonObject& body) {
    const protocol::Report report = protocol::decode_report(body);
    double loss = NAN;
    for (const auto& [name, value] : report.metrics)
      if (name == "loss") loss = value.value_or(NAN);
    const auto verdict = controller->report(trial, report.step, loss);
    protocol::DecisionReply reply;
    reply.decision = core::decision_word(verdict.instruction);
    reply.instruction = core::to_string(verdict.instruction);
    return Reply{protocol::MessageType::Decision, protocol::encode(reply)};
  }
  std::string on_hello(ConnectionId id, const protocol::HelloFrom& hello) override {
    return backend->on_hello(id, hello);
  }
  std::optional<Reply> on_message(ConnectionId id, protocol::MessageType type,
                                  const protocol::JsonObject& body) override {
    if (const auto trial = backend->trial_of(id)) {
      if (type == protocol::MessageType::Report) return report(*trial, body);
      if (type == protocol::MessageType::Heartbeat) return std::nullopt;
    }
    return backend->on_message(id, type, body);
  }
  void on_closed(ConnectionId id, const std::string& reason) override {
    if (backend->owns(id)) backend->on_closed(id, reason);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(an_mpi_steps_groups_run_the_trials_back_to_back) {
  testing::TempFolder folder("slurmtune-group-backend");
  const std::string results = folder.file("study.h5");
  fs::create_directories(trials_dir_of(results));
  const std::string token = protocol::generate_token();
  protocol::write_token_file(token_file_of(results), token);

  EventLoop loop;
  Peers peers;
  ControlServer server(loop, peers, token, ControlServerOptions{"127.0.0.1", 0, 10, 128});
  RunOptions options;
  options.launch.launcher = "local";
  options.launch.slots = 2;
  options.end_margin_s = 0;
  const auto launcher = make_launcher(spec().resources, options.launch);
  Ends ends;
  core::StudyController controller(
      spec(), core::make_scheduler(spec().scheduler, spec().mode, spec().seed, spec().name),
      core::make_suggester(spec().space, spec().sampler, false, spec().seed), ends, nullptr);
  TrialTable trials;
  SessionClock clock;
  testing::RecordingHost host(trials, controller, trials_dir_of(results));
  host.address = "127.0.0.1:" + std::to_string(server.port());
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
                               host.address,
                               credentials,
                               trials_dir_of(results),
                               ""};
  GroupBackend backend(context);
  peers.backend = &backend;
  peers.controller = &controller;

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!(backend.done() && !backend.busy()) && std::chrono::steady_clock::now() < deadline) {
    backend.fill();
    loop.run_once(20);
    backend.reap();
    backend.tick({});
  }
  BOOST_REQUIRE_MESSAGE(backend.done() && !backend.busy(), "the step did not finish in 120 s");
  // Every trial ended, trial 2 after one failed attempt (group_trial injects it), and the
  // step's groups ran them all: no trial is left in the table.
  BOOST_TEST(ends.ended.size() == 4U);
  for (const auto& [trial, how] : ends.ended)
    BOOST_TEST((how == core::TrialEnd::Completed), "trial " << trial);
  BOOST_TEST(ends.retried[2] == 1);
  BOOST_TEST(trials.empty());
}
