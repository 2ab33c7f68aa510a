// The coordinator with a fake launch backend and a fake clock: no trial processes, and
// no connection to its control plane (it listens on loopback; nothing connects). The
// fake's trials report through the TrialHost as a trial's messages would arrive, so the
// real controller, scheduler, results file, limits and signal handling decide: the
// launch/report/decision/exit cycle, retries, time limits, hang detection, shutdown on
// each signal, and resume.
#define BOOST_TEST_MODULE runtime_coordinator
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "config/study_file.hpp"
#include "protocol/trial_messages.hpp"
#include "protocol/wire/protocol.hpp"
#include "runtime/coordinator/coordinator.hpp"
#include "store/study_reader.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
using Clock = std::chrono::steady_clock;

namespace {

// What the fake trials do, and what the fake backend saw.
struct World {
  Clock::time_point now = Clock::now();
  std::size_t slots = 2;
  double seconds_per_turn = 1;                  // the clock advances this much per tick
  std::set<core::TrialId> crash_first_attempt;  // its attempt 0 fails at step 2
  std::set<core::TrialId> silent;               // never reports
  std::map<core::TrialId, int> turns_per_step;  // reports every N ticks (default 1)
  std::optional<int> signal_at_tick;            // raise `signal` at this tick
  int signal = 0;
  // seen
  int ticks = 0;
  std::vector<std::string> ended_attempts;        // "trial: fault" of end_attempt calls
  std::map<core::TrialId, double> resumed_from;   // checkpoint step a start was given
  std::map<ConnectionId, std::string> delivered;  // decisions held for a group commit, sent
  int held_decisions = 0;                         // reports whose decision waited
  std::size_t launches = 0;
  bool shutdown_seen = false;
  // The session's control-plane handler (the coordinator), set once it exists: the fake
  // trials' messages go to it as the control server would hand them on.
  ControlHandler* handler = nullptr;
};

class FakeBackend final : public LaunchBackend {
 public:
  FakeBackend(const BackendContext& context, World& world) : c_(context), world_(world) {}

  std::string describe() const override { return "; fake backend"; }
  void begin() override {}
  void fill() override {
    if (c_.controller.shutting_down()) return;
    while (c_.trials.size() < world_.slots) {
      auto launch = c_.controller.next_launch(c_.clock.elapsed_s(), c_.clock.fits_before_end());
      if (!launch) {
        c_.host.nothing_to_launch();
        break;
      }
      ActiveTrial& t = c_.host.register_trial(*launch, TrialResources{{0}, "fake1", {}});
      const ConnectionId connection = 1000 + t.trial;
      c_.trials.bind(connection, t.trial);
      t.reporter = connection;
      if (t.checkpoint_step) world_.resumed_from[t.trial] = *t.checkpoint_step;
      next_step_[t.trial] = t.checkpoint_step ? static_cast<int>(*t.checkpoint_step) + 1 : 1;
      ++world_.launches;
    }
    done_ = c_.trials.empty();
  }
  bool done() const override { return done_; }
  bool busy() const override { return false; }
  std::string on_hello(ConnectionId, const protocol::HelloFrom&) override {
    throw protocol::ProtocolError("the fake backend takes no peers");
  }
  bool owns(ConnectionId) const override { return false; }
  std::optional<Reply> on_message(ConnectionId, protocol::MessageType,
                                  const protocol::JsonObject&) override {
    return std::nullopt;
  }
  void on_closed(ConnectionId, const std::string&) override {}
  void trial_connection_closed(ActiveTrial&) override {}
  void reap() override {}
  void end_attempt(ActiveTrial& t) override {
    world_.ended_attempts.push_back(std::to_string(t.trial) + ": " + t.fault);
    c_.host.end_trial(t.trial, false, t.fault);
  }
  void begin_shutdown() override { world_.shutdown_seen = true; }
  void stop(bool) override {}

  // One turn: the clock moves, every trial due reports its next step and obeys.
  void tick(const std::vector<core::TrialId>& /*due*/) override {
    // A group commit takes milliseconds, and the world's clock does not move for it: the
    // decisions held at the last tick arrive (the coordinator began their commit after
    // it) before anybody takes another step.
    deliver_held_decisions();
    ++world_.ticks;
    world_.now += std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(world_.seconds_per_turn));
    if (world_.signal_at_tick && world_.ticks == *world_.signal_at_tick)
      ::kill(::getpid(), world_.signal);
    std::vector<core::TrialId> running;
    for (const auto& [id, t] : c_.trials)
      running.push_back(id);
    for (const core::TrialId id : running)
      if (ActiveTrial* t = c_.trials.find(id)) turn(*t);
  }

 private:
  void turn(ActiveTrial& t) {
    const core::TrialId id = t.trial;
    if (world_.silent.contains(id) || awaits_decision(t)) return;
    const int every = world_.turns_per_step.contains(id) ? world_.turns_per_step.at(id) : 1;
    if (world_.ticks % every != 0) return;
    const int step = next_step_[id]++;
    if (step == 2 && t.attempt == 0 && world_.crash_first_attempt.contains(id))
      return static_cast<void>(c_.host.end_trial(id, false, "exit status 1 (crashed at step 2)"));
    // Loss falls with the step; trial ids differ in their level, so ASHA has a ranking.
    protocol::Report report{static_cast<double>(step), {{"loss", 1.0 / step + 0.1 * (id % 5)}}};
    const auto reply =
        world_.handler->on_message(1000 + id, protocol::MessageType::Report,
                                   protocol::payload_object(protocol::Frame{
                                       protocol::MessageType::Report, protocol::encode(report)}));
    if (reply) return obey(t, step, reply->payload);
    // A decision that asks for a checkpoint waits for the results file's group commit.
    ++world_.held_decisions;
    awaiting_[id] = step;
  }

  // Runs the coordinator's loop (its flush thread signals there) until every held
  // decision has arrived, then obeys them. Bounded: a commit that never comes fails the
  // test at the trial that waits for it.
  void deliver_held_decisions() {
    std::erase_if(awaiting_, [&](const auto& held) { return !c_.trials.find(held.first); });
    const auto arrived = [&] {
      return std::ranges::all_of(awaiting_, [&](const auto& held) {
        return world_.delivered.contains(1000 + held.first);
      });
    };
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!arrived() && std::chrono::steady_clock::now() < give_up)
      c_.loop.run_once(10);
    std::vector<core::TrialId> waiting;
    for (const auto& [id, step] : awaiting_)
      waiting.push_back(id);
    for (const core::TrialId id : waiting)
      if (ActiveTrial* t = c_.trials.find(id)) awaits_decision(*t);
  }

  // A held decision, delivered once its report is durable; the trial waits until then.
  bool awaits_decision(ActiveTrial& t) {
    const auto step = awaiting_.find(t.trial);
    if (step == awaiting_.end()) return false;
    const auto it = world_.delivered.find(1000 + t.trial);
    if (it == world_.delivered.end()) return true;
    const std::string payload = it->second;
    const int at = step->second;
    world_.delivered.erase(it);
    awaiting_.erase(step);
    obey(t, at, payload);
    return true;
  }

  void obey(ActiveTrial& t, int step, const std::string& payload) {
    const auto decision = protocol::decode_decision(
        protocol::payload_object(protocol::Frame{protocol::MessageType::Decision, payload}));
    if (decision.checkpoint) save_checkpoint(t, step);
    if (decision.decision != "continue") c_.host.end_trial(t.trial, true, "");
  }

  // A real file in the trial's folder, indexed as a trial's CHECKPOINT would be.
  void save_checkpoint(ActiveTrial& t, int step) {
    const std::string path = t.dir + "/ckpt-" + std::to_string(step);
    std::ofstream(path) << "weights at step " << step << "\n";
    const protocol::CheckpointSaved saved{static_cast<double>(step), path, 1};
    world_.handler->on_message(1000 + t.trial, protocol::MessageType::Checkpoint,
                               protocol::payload_object(protocol::Frame{
                                   protocol::MessageType::Checkpoint, protocol::encode(saved)}));
  }

  BackendContext c_;
  World& world_;
  std::map<core::TrialId, int> next_step_;
  std::map<core::TrialId, int> awaiting_;  // the step whose decision a trial waits for
  bool done_ = false;
};

core::StudySpec study(const std::string& trial_extra = "", int max_trials = 6) {
  return config::parse_study(R"(
[study]
name = "fake"
metric = "loss"
mode = "min"
seed = 5
max_trials = )" + std::to_string(max_trials) +
                                 R"(
[search]
x = { uniform = [0, 1] }
[scheduler]
type = "asha"
max_t = 9
grace_period = 1
reduction_factor = 3
[trial]
command = ["true"]
)" + trial_extra,
                             "fake.toml");
}

struct Session {
  testing::TempFolder folder{"slurmtune-coordinator"};
  World world;

  RunOptions options() const {
    RunOptions o;
    o.output = folder.file("study.h5");
    o.launch.launcher = "local";
    o.launch.slots = 4;
    o.control.listen_host = "127.0.0.1";
    o.progress_interval_s = 3600;
    return o;
  }
  // Runs one session of `spec` to its end; its exit status.
  int run(const core::StudySpec& spec) {
    CoordinatorSeams seams;
    seams.now = [this] { return world.now; };
    seams.backend = [this](const BackendContext& context) {
      return std::make_unique<FakeBackend>(context, world);
    };
    seams.turn_ms = 1;
    seams.deliver = [this](ConnectionId to, const Reply& reply) {
      world.delivered[to] = reply.payload;
    };
    Coordinator coordinator(spec, options(), seams);
    world.handler = &coordinator;
    return coordinator.run();
  }
  std::map<std::uint64_t, store::TrialRecord> trials() const {
    std::map<std::uint64_t, store::TrialRecord> out;
    for (auto& t : store::StudyReader(folder.file("study.h5")).trials())
      out.emplace(t.id, t);
    return out;
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(trials_launch_report_are_judged_and_end) {
  Session s;
  const auto spec = study();
  BOOST_TEST(s.run(spec) == 0);
  const auto trials = s.trials();
  BOOST_TEST(trials.size() == 6U);
  BOOST_TEST(s.world.launches == 6U);
  int stopped = 0, completed = 0;
  for (const auto& [id, t] : trials) {
    BOOST_TEST(t.reports >= 1U);
    stopped += t.status == store::TrialStatus::Stopped;
    completed += t.status == store::TrialStatus::Completed;
    BOOST_TEST(t.nodes == "fake1");
  }
  BOOST_TEST(stopped + completed == 6);
  BOOST_TEST(stopped >= 1);    // ASHA cut some at a rung
  BOOST_TEST(completed >= 1);  // and let some reach max_t
  // A trial that passes a rung is told to checkpoint there: that decision waited for the
  // group commit that made its report durable, and reached the trial after it.
  BOOST_TEST(s.world.held_decisions >= 1);
  BOOST_TEST(s.world.delivered.empty());
}

BOOST_AUTO_TEST_CASE(a_failed_attempt_is_retried_up_to_max_failures) {
  Session s;
  s.world.crash_first_attempt = {0};  // the best trial: ASHA lets it reach step 2
  BOOST_TEST(s.run(study("max_failures = 1\n")) == 0);
  const auto trial = s.trials().at(0);
  BOOST_TEST(trial.retries == 1);
  BOOST_TEST((trial.status == store::TrialStatus::Completed));
  BOOST_TEST(s.world.launches == 7U);  // 6 trials, one of them twice
  // Without retries the same crash fails the trial, with the trial's own words.
  Session again;
  again.world.crash_first_attempt = {0};
  BOOST_TEST(again.run(study()) == 0);
  const auto failed = again.trials().at(0);
  BOOST_TEST((failed.status == store::TrialStatus::Failed));
  BOOST_TEST(failed.error.find("crashed at step 2") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_attempt_past_its_time_limit_is_ended_and_fails) {
  Session s;
  s.world.turns_per_step = {{0, 5}};  // trial 0 takes 5 s a step: 9 steps are 45 s
  BOOST_TEST(s.run(study("time_limit_s = 20\n")) == 0);
  BOOST_REQUIRE(s.world.ended_attempts.size() == 1U);
  BOOST_TEST(s.world.ended_attempts.at(0) ==
             "0: time limit of 20.0 s exceeded ([trial] time_limit_s)");
  const auto trial = s.trials().at(0);
  BOOST_TEST((trial.status == store::TrialStatus::Failed));
  BOOST_TEST(trial.error.find("time limit of 20.0 s exceeded") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_silent_attempt_is_taken_for_hung) {
  Session s;
  s.world.silent = {3};
  BOOST_TEST(s.run(study("report_timeout_s = 4\n")) == 0);
  BOOST_REQUIRE(s.world.ended_attempts.size() == 1U);
  BOOST_TEST(s.world.ended_attempts.at(0) ==
             "3: no report or heartbeat for 4.0 s after its launch ([trial] report_timeout_s): "
             "hung?");
  BOOST_TEST((s.trials().at(3).status == store::TrialStatus::Failed));
}

BOOST_AUTO_TEST_CASE(each_shutdown_signal_stops_the_session_with_its_status) {
  for (const auto& [signal, status] :
       {std::pair{SIGUSR1, kMoreWorkLeft}, std::pair{SIGTERM, cancelled_exit_status(SIGTERM)},
        std::pair{SIGINT, cancelled_exit_status(SIGINT)}}) {
    Session s;
    s.world.signal_at_tick = 3;
    s.world.signal = signal;
    BOOST_TEST(s.run(study("", 20)) == status, "signal " << signal);
    BOOST_TEST(s.world.shutdown_seen);
    // The running trials were told to suspend at their next report and saved a
    // checkpoint: they stay unfinished (running) for the next session, nothing they did
    // is lost, and nothing was launched after the signal.
    const auto trials = s.trials();
    BOOST_TEST(trials.size() < 20U);
    int unfinished = 0;
    for (const auto& [id, t] : trials)
      unfinished += t.status == store::TrialStatus::Running;
    BOOST_TEST(unfinished >= 1);
    BOOST_TEST(store::StudyReader(s.folder.file("study.h5")).checkpoints().size() >=
               static_cast<std::size_t>(unfinished));
  }
}

BOOST_AUTO_TEST_CASE(a_stopped_session_resumes_where_it_left_off) {
  Session s;
  s.world.signal_at_tick = 3;
  s.world.signal = SIGUSR1;
  const auto spec = study("", 10);
  BOOST_TEST(s.run(spec) == kMoreWorkLeft);
  const std::size_t first_session = s.trials().size();
  s.world.signal_at_tick.reset();
  s.world.ticks = 0;
  BOOST_TEST(s.run(spec) == 0);
  const auto trials = s.trials();
  BOOST_TEST(trials.size() == 10U);
  BOOST_TEST(first_session < 10U);
  // The suspended trials came back from the checkpoints they saved when told to stop.
  BOOST_TEST(!s.world.resumed_from.empty());
  for (const auto& [id, t] : trials)
    BOOST_TEST(
        (t.status == store::TrialStatus::Completed || t.status == store::TrialStatus::Stopped),
        "trial " << id);
}
