#pragma once
// What the launch-backend tests share (test_process_backend.cpp, test_worker_pool.cpp,
// test_group_backend.cpp): a study of one real parameter under FIFO whose trials run
// `command` (a TOML array), a study controller of it that records nothing (no results
// file), and the coordinator's part of a trial's life as a small recording stand-in.
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "config/study_file.hpp"
#include "core/schedulers/scheduler_spec.hpp"
#include "core/search/suggester.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/study_controller.hpp"
#include "core/study/suggester_factory.hpp"
#include "runtime/attempts/trial_table.hpp"
#include "runtime/backends/launch_backend.hpp"

namespace slurmtune::testing {

inline core::StudySpec fifo_study(const std::string& name, int max_trials,
                                  const std::string& command) {
  return config::parse_study(
      "[study]\nname = \"" + name +
          "\"\nmetric = \"loss\"\nmode = \"min\"\nmax_trials = " + std::to_string(max_trials) +
          "\n[search]\nx = { uniform = [0, 1] }\n[scheduler]\ntype = "
          "\"fifo\"\n[trial]\ncommand = " +
          command + "\n",
      name + ".toml");
}

/// A control plane that takes no peers (the backend under test talks to none).
struct NoPeers final : runtime::ControlHandler {
  std::string on_hello(runtime::ConnectionId, const protocol::HelloFrom&) override {
    throw protocol::ProtocolError("no peers here");
  }
  std::optional<runtime::Reply> on_message(runtime::ConnectionId, protocol::MessageType,
                                           const protocol::JsonObject&) override {
    throw protocol::ProtocolError("no peers here");
  }
  void on_closed(runtime::ConnectionId, const std::string&) override {}
};

/// The study controller of `spec`, as the coordinator makes it, minus the results file.
class QuietController {
 public:
  explicit QuietController(const core::StudySpec& spec)
      : controller(spec, core::make_scheduler(spec.scheduler, spec.mode, spec.seed, spec.name),
                   core::make_suggester(spec.space, spec.sampler, false, spec.seed), observer_,
                   nullptr) {}

 private:
  struct Quiet final : core::StudyObserver {};
  Quiet observer_;  // before `controller`, which keeps a reference to it

 public:
  core::StudyController controller;
};

/// The coordinator's part, recorded: attempts registered in the trial table (a folder
/// under `dir` each, their parameters), their environment (the control plane's address
/// and token file when given), their ends passed to the controller. Messages of running
/// trials are the coordinator's, not a host's: a test that needs them answers them in its
/// ControlHandler.
struct RecordingHost : runtime::TrialHost {
  RecordingHost(runtime::TrialTable& t, core::StudyController& c, std::string d)
      : trials(t), controller(c), dir(std::move(d)) {}
  runtime::ActiveTrial& register_trial(const core::TrialLaunch& launch,
                                       runtime::TrialResources resources) override {
    auto t = std::make_unique<runtime::ActiveTrial>();
    t->trial = launch.trial;
    t->attempt = launch.attempt;
    t->kind = launch.kind;
    t->dir = dir + "/trial-" + std::to_string(launch.trial);
    t->stderr_path = t->dir + "/stderr.log";
    std::filesystem::create_directories(t->dir);
    t->params_json = controller.spec().space.to_json(launch.config);
    t->placement = std::move(resources);
    t->started = t->last_sign = std::chrono::steady_clock::now();
    return trials.add(std::move(t));
  }
  std::map<std::string, std::string> trial_environment(
      const runtime::ActiveTrial& t) const override {
    std::map<std::string, std::string> env = {{"SLURMTUNE_TRIAL_ID", std::to_string(t.trial)},
                                              {"SLURMTUNE_TRIAL_DIR", t.dir},
                                              {"SLURMTUNE_PARAMS", t.params_json}};
    if (!address.empty()) env["SLURMTUNE_ADDR"] = address;
    return env;
  }
  core::ExitMeaning end_trial(core::TrialId trial, bool clean, const std::string& error) override {
    ended.emplace_back(trial, clean, error);
    const auto meaning = controller.trial_exited(trial, clean, error);
    trials.erase(trial);
    return meaning;
  }
  void nothing_to_launch() override { ++idle; }

  runtime::TrialTable& trials;
  core::StudyController& controller;
  std::string dir;
  std::string address;  ///< for trials that connect ("" leaves them out)
  std::vector<std::tuple<core::TrialId, bool, std::string>> ended;
  int idle = 0;
};

}  // namespace slurmtune::testing
