#pragma once
// `slurmtune run`: one process that owns the results file (single writer), the sampler
// and the scheduler (through core::StudyController), the control plane and the trial
// processes, all on one epoll loop. Nothing else to start: no head node, no database.
// The coordinator wires the controller, the recorder, the control plane, the session's
// clock and one launch backend (runtime/backends/launch_backend.hpp), which it does not know.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/study/study_controller.hpp"
#include "core/study/study_spec.hpp"
#include "runtime/attempts/stderr_cap.hpp"
#include "runtime/attempts/trial_table.hpp"
#include "runtime/backends/launch_backend.hpp"
#include "runtime/backends/node_checkpoints.hpp"
#include "runtime/backends/run_options.hpp"
#include "runtime/control/background_work.hpp"
#include "runtime/control/control_server.hpp"
#include "runtime/control/event_loop.hpp"
#include "runtime/control/loop_stalls.hpp"
#include "runtime/coordinator/checkpoint_path.hpp"
#include "runtime/coordinator/durable_replies.hpp"
#include "runtime/coordinator/launch_files.hpp"
#include "runtime/coordinator/progress_report.hpp"
#include "runtime/launch/job_clock.hpp"
#include "runtime/pbt/pbt_exploits.hpp"
#include "runtime/recording/study_recorder.hpp"
#include "runtime/recording/study_session.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {

/// The connections one rank of a trial attempt may hold open at once.
inline constexpr std::size_t kConnectionsPerRank = 4;

/// Exit status of `slurmtune run` when SIGUSR1 (the time-limit warning, or an explicit
/// "checkpoint and requeue now") stopped it with work left: run it again (the sbatch
/// template requeues) to resume. EX_TEMPFAIL.
inline constexpr int kMoreWorkLeft = 75;
/// SIGTERM or SIGINT (scancel, preemption, Ctrl-C) stopped it the same graceful way, but
/// the exit status is 128 + the signal's number: a cancelled job must not requeue itself.
inline constexpr int cancelled_exit_status(int signal) {
  return 128 + signal;
}

/// What a test puts in place of the real thing
/// (tests/unit/runtime/coordinator/test_coordinator.cpp): the clock, the launch backend, and how
/// long the loop waits for an event per turn.
struct CoordinatorSeams {
  SteadyNow now;  ///< empty: the steady clock
  /// Empty: the study's own backend (make_launch_backend).
  std::function<std::unique_ptr<LaunchBackend>(const BackendContext&)> backend;
  int turn_ms = 100;
  /// Where decisions held for a group commit go once durable. Empty: the control server.
  std::function<void(ConnectionId, const Reply&)> deliver;
};

class Coordinator final : public ControlHandler, private TrialHost {
 public:
  Coordinator(core::StudySpec spec, RunOptions options, CoordinatorSeams seams = {});
  ~Coordinator() override;
  /// Runs the study to its end, or until a shutdown signal; returns the exit status
  /// (0, kMoreWorkLeft, or cancelled_exit_status(signal)).
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  // the session (coordinator.cpp)
  void tick();
  int outcome_status() const;
  void enforce_trial_limits(const std::vector<core::TrialId>& due);
  std::string silence_message(const ActiveTrial& t, double silence_s) const;
  void end_attempt(ActiveTrial& t, const std::string& why);
  void on_shutdown_signal(int signal);
  void begin_shutdown(int signal);
  void start_allocation_clock();

  // TrialHost: what every backend's trials share (coordinator_trials.cpp)
  ActiveTrial& register_trial(const core::TrialLaunch& launch, TrialResources resources) override;
  std::map<std::string, std::string> trial_environment(const ActiveTrial& t) const override;
  core::ExitMeaning end_trial(core::TrialId trial, bool clean, const std::string& error) override;
  void nothing_to_launch() override;  // logs held work; ends a session that only holds

  // control plane (coordinator_messages.cpp)
  std::string on_hello(ConnectionId id, const protocol::HelloFrom& hello) override;
  std::optional<Reply> on_message(ConnectionId id, protocol::MessageType type,
                                  const protocol::JsonObject& body) override;
  void on_closed(ConnectionId id, const std::string& reason) override;
  protocol::AttemptGrant attempt_grant(core::TrialId trial) const override;
  bool routes(ConnectionId id) const override { return backend_->routes(id); }
  void check_routed(ConnectionId via, const protocol::HelloFrom& hello) const override {
    backend_->check_routed(via, hello);
  }
  // A trial's REPORT, CHECKPOINT or HEARTBEAT, whichever connection carries it
  // (coordinator_trials.cpp).
  std::optional<Reply> trial_message(ActiveTrial& t, ConnectionId id, protocol::MessageType type,
                                     const protocol::JsonObject& body);
  /// nullopt when the decision waits for a group commit (durable_replies_).
  std::optional<Reply> on_report(ActiveTrial& t, ConnectionId id, const protocol::JsonObject& body);
  /// Sends the held decisions whose rows are durable now.
  void release_durable_replies();
  void on_checkpoint(ActiveTrial& t, const protocol::JsonObject& body);

  // A copy: the defaults that follow the allocation are resolved into it at start.
  core::StudySpec spec_;
  RunOptions options_;
  std::string study_dir_, trials_dir_, token_file_, address_;
  TrialFolders folders_;     // each trial's folder and checkpoint folder
  std::string python_path_;  // PYTHONPATH for trials: slurmtune's package first
  // Where a CHECKPOINT may name, its folders resolved once.
  CheckpointConfinement confined_checkpoints_;
  // Before the controller: suggest_ahead's sampler thread, which the controller's
  // suggester holds, watches an eventfd on it until it ends.
  EventLoop loop_;
  OpenedStudy study_;
  std::unique_ptr<StudyRecorder> recorder_;
  std::unique_ptr<core::StudyController> controller_;
  std::unique_ptr<Launcher> launcher_;
  LoopStalls stalls_;  // how long each turn of the loop worked instead of waiting, and at what
  // File-system work the loop must not wait for (PBT's copies, ended attempts' credential
  // files), first in, first out on one helper thread. Its tasks hold what they use.
  BackgroundWork files_;
  std::unique_ptr<CheckpointRemover> remover_;         // [checkpoints], when it removes any
  std::unique_ptr<NodeCheckpoints> node_checkpoints_;  // [checkpoints] node_local, with agents
  protocol::UniqueFd signals_;
  std::unique_ptr<CredentialFiles> credentials_;  // the attempts', steps' and workers'
  std::unique_ptr<LaunchFiles> launch_files_;     // new trials' folders and credentials, ahead
  std::unique_ptr<ControlServer> server_;
  TrialTable trials_;
  std::unique_ptr<LaunchBackend> backend_;
  PbtExploits pbt_;  // PBT's exploits and kept checkpoints
  CoordinatorSeams seams_;
  SessionClock time_;  // elapsed time and, inside a job, the allocation's clock; the session's now
  ProgressReport progress_;
  DurableReplies durable_replies_;  // decisions waiting for a group commit
  protocol::UniqueFd commits_;      // an eventfd the flush thread signals after each commit
  bool node_local_ = false;  // [checkpoints] node_local, the nodes' agents doing the file work
  bool clock_announced_ = false;
  int shutdown_signals_ = 0;
  int cancel_signal_ = 0;  // SIGTERM/SIGINT seen: never exit 75 (no requeue)
  std::optional<std::pair<int, Clock::time_point>> last_signal_;
  Clock::time_point stderr_checked_{};  // when the trials' stderr files were last capped
  Clock::time_point last_periodic_{};   // when tick() last did its periodic work
  static constexpr std::chrono::milliseconds kPeriodicInterval{100};
  // A turn's callbacks stop after this (the ready connections left go first next turn):
  // 32 node agents' bursts of reports filled turns of 160 ms at 16,384 trials, and
  // held decisions, launches and the flush waited behind them.
  static constexpr std::chrono::milliseconds kEventBudget{5};
  StderrCaps stderr_caps_;
  bool halt_announced_ = false;
};

}  // namespace slurmtune::runtime
