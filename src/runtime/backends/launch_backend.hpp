#pragma once
// Where and how a session's trials run, behind one interface (doc/architecture.md):
//   ProcessBackend  a process per trial attempt: a job step (srun), the program itself or
//                   mpirun on a workstation, or a child of a worker step on its node
//                   ([resources] launch = "worker", and the nodes of joined jobs);
//   GroupBackend    [trial] mode = "mpi": MPI steps whose trial groups ask for trials.
// The coordinator wires one of them to the study controller, the control plane and
// the clock, and does not know which: make_launch_backend is the one place that looks
// at the launch mode.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/study/study_controller.hpp"
#include "core/study/study_spec.hpp"
#include "protocol/session_messages.hpp"
#include "runtime/attempts/trial_table.hpp"
#include "runtime/control/control_server.hpp"
#include "runtime/control/credential_files.hpp"
#include "runtime/control/event_loop.hpp"
#include "runtime/control/loop_stalls.hpp"
#include "runtime/launch/job_clock.hpp"
#include "runtime/launch/launcher.hpp"

namespace slurmtune::runtime {

struct RunOptions;
class NodeCheckpoints;

/// What a backend asks of the coordinator: the parts of a trial's life that do not
/// depend on where it runs.
class TrialHost {
 public:
  virtual ~TrialHost() = default;
  /// A new attempt of `launch` on `resources`, registered in the trial table (its folder
  /// made, its checkpoint found, its clock started).
  virtual ActiveTrial& register_trial(const core::TrialLaunch& launch,
                                      TrialResources resources) = 0;
  /// The SLURMTUNE_* variables (and PYTHONPATH) of a trial's process.
  virtual std::map<std::string, std::string> trial_environment(const ActiveTrial& t) const = 0;
  /// The attempt is over (`clean`, or `error` says why): recorded, and removed from the
  /// trial table with its connections. What the controller made of it.
  virtual core::ExitMeaning end_trial(core::TrialId trial, bool clean,
                                      const std::string& error) = 0;
  /// The controller had nothing to launch: held work is logged, and an idle session
  /// that only holds work ends.
  virtual void nothing_to_launch() = 0;
};

/// The parts of the session a backend works with (all owned by the coordinator).
struct BackendContext {
  const core::StudySpec& spec;
  const RunOptions& options;
  core::StudyController& controller;
  ControlServer& server;
  EventLoop& loop;
  LoopStalls& stalls;  ///< the loop's work by kind: suggestions are timed apart from launches
  Launcher& launcher;
  const SessionClock& clock;
  TrialTable& trials;
  TrialHost& host;
  std::string address;                 ///< the control plane's HOST:PORT, for the processes started
  const CredentialFiles& credentials;  ///< theirs, written as they start
  std::string trials_dir;
  std::string python_path;  ///< PYTHONPATH for what runs Python: slurmtune's package first
  /// [checkpoints] node_local with node agents: where trials resume, what agents remove.
  NodeCheckpoints* node_checkpoints = nullptr;
  /// Makes a relaunch's files (its credential, ...) off the loop and then calls `ready` on
  /// it; register_trial takes them. Empty: register_trial makes them on the loop.
  std::function<void(const core::TrialLaunch& launch, std::function<void()> ready)>
      prepare_relaunch = {};
};

class LaunchBackend {
 public:
  virtual ~LaunchBackend() = default;
  /// "...; ports 29500-29749, ..." appended to the launcher's line in the log ("" none).
  virtual std::string describe() const = 0;
  /// Before the first launch (worker steps start here).
  virtual void begin() = 0;
  /// Starts what the controller has to launch on free resources, or answers the trial
  /// groups that wait for work.
  virtual void fill() = 0;
  /// fill() stopped at its time budget with launches left: the loop takes its next turn
  /// without waiting for an event.
  virtual bool more_to_fill() const { return false; }
  /// Nothing more can happen: nothing runs, nothing waits to connect, nothing to launch.
  virtual bool done() const = 0;
  /// Processes of its own (MPI steps) still run: the session waits for them.
  virtual bool busy() const = 0;

  /// HELLO of a group or a worker (a trial's own HELLO is the coordinator's); the
  /// WELCOME payload, or ProtocolError when this backend takes no such peer.
  virtual std::string on_hello(ConnectionId id, const protocol::HelloFrom& hello) = 0;
  /// Whether `id` is a connection of this backend's (a group's, a worker's).
  virtual bool owns(ConnectionId id) const = 0;
  /// A message on a connection it owns.
  virtual std::optional<Reply> on_message(ConnectionId id, protocol::MessageType type,
                                          const protocol::JsonObject& body) = 0;
  /// The trial a connection it owns speaks for now (a trial group running one), if any:
  /// the coordinator takes that trial's REPORT, CHECKPOINT and HEARTBEAT itself, as it
  /// does every other trial's, whichever connection carries them.
  virtual std::optional<core::TrialId> trial_of(ConnectionId /*id*/) const { return std::nullopt; }
  /// Whether a connection it owns is a node agent's, which carries its node's connections
  /// as channels (ControlHandler::routes).
  virtual bool routes(ConnectionId /*id*/) const { return false; }
  /// A HELLO on a channel of agent `via`: ProtocolError unless that agent may carry it.
  virtual void check_routed(ConnectionId /*via*/, const protocol::HelloFrom& /*hello*/) const {
    throw protocol::ProtocolError("this study's launch mode has no node agents");
  }
  /// A connection it owns closed.
  virtual void on_closed(ConnectionId id, const std::string& reason) = 0;
  /// A trial's connection closed (the coordinator has unbound it): an exit that waited
  /// for its last messages may be classified now.
  virtual void trial_connection_closed(ActiveTrial& t) = 0;

  /// SIGCHLD: children that ended.
  virtual void reap() = 0;
  /// Every 100 ms: its own timeouts, and the attempts the trial table woke up (`due`:
  /// exits whose messages may have drained, graces of stops that may have run out).
  /// An attempt in `due` may have ended already; the backend looks each one up.
  virtual void tick(const std::vector<core::TrialId>& due) = 0;
  /// The coordinator gives up on a running attempt (time limit, silence): end it.
  virtual void end_attempt(ActiveTrial& t) = 0;
  /// The session stops (a signal, the allocation's clock): no more launches.
  virtual void begin_shutdown() = 0;
  /// The session is over; `study_over`: the study is, too (workers of joined jobs leave).
  virtual void stop(bool study_over) = 0;
};

/// [trial] command (or program) can run: InputError naming the study file otherwise.
/// Called before anything is written, so a study that cannot start leaves no file.
void check_launchable(const core::StudySpec& spec);

/// Whether the study starts worker steps (a node agent on every node): [resources]
/// launch = "worker", or a study of one-rank trials without GPUs that a step per trial
/// would take past the cluster's MaxStepCount (said in the log; a study of other trials
/// is warned). Decided once, before anything is made for a launch; scontrol's output
/// goes to `trials_dir`.
bool uses_worker_steps(const core::StudySpec& spec, const Launcher& launcher,
                       const std::string& trials_dir);

/// The backend of the study's launch mode; `worker_steps`: uses_worker_steps.
std::unique_ptr<LaunchBackend> make_launch_backend(const BackendContext& context,
                                                   bool worker_steps);

/// Whether every trial of `spec` starts on a worker step (`worker_steps`, trials of one
/// rank, no trial groups, a launcher with worker steps: not the local one, whose trials
/// are its own children): the workers then derive every attempt's credential, and the
/// coordinator writes none.
bool workers_start_every_trial(const core::StudySpec& spec, const Launcher& launcher,
                               bool worker_steps);

/// Sets `t`'s terminate_at `grace_s` after `now`, unless an earlier one is set: SIGTERM
/// then, SIGKILL a kill grace later (backends that own processes carry it out, when
/// `trials` wakes the attempt up).
void schedule_stop(TrialTable& trials, ActiveTrial& t, std::chrono::steady_clock::time_point now,
                   double grace_s);

}  // namespace slurmtune::runtime
