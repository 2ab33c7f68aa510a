#pragma once
// `slurmtune run`: one process that owns the results file (single writer), the sampler
// and the scheduler (through core::StudyController), the control plane and the trial
// processes, all on one epoll loop. Nothing else to start: no head node, no database.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/study/study_controller.hpp"
#include "core/study/study_spec.hpp"
#include "protocol/worker_messages.hpp"
#include "runtime/control_server.hpp"
#include "runtime/event_loop.hpp"
#include "runtime/job_clock.hpp"
#include "runtime/launcher.hpp"
#include "runtime/pbt_checkpoints.hpp"
#include "runtime/progress_report.hpp"
#include "runtime/rendezvous.hpp"
#include "runtime/study_recorder.hpp"
#include "runtime/study_session.hpp"
#include "runtime/trial_process.hpp"

namespace slurmtune::runtime {

/// Exit status of `slurmtune run` when SIGUSR1 (the time-limit warning, or an explicit
/// "checkpoint and requeue now") stopped it with work left: run it again (the sbatch
/// template requeues) to resume. EX_TEMPFAIL.
inline constexpr int kMoreWorkLeft = 75;
/// SIGTERM or SIGINT (scancel, preemption, Ctrl-C) stopped it the same graceful way, but
/// the exit status is 128 + the signal's number: a cancelled job must not requeue itself.
inline constexpr int cancelled_exit_status(int signal) {
  return 128 + signal;
}

struct RunOptions {
  std::string output;          ///< the results file
  bool allow_changes = false;  ///< resume despite safe differences in the study file
  LaunchOptions launch;
  ControlServerOptions control;
  std::string advertise_host;  ///< host name trials connect to (default: this host's name)
  double progress_interval_s = 30;
  double stop_grace_s = 30;      ///< told to stop -> SIGTERM after this
  double kill_grace_s = 10;      ///< SIGTERM -> SIGKILL after this
  double shutdown_grace_s = 60;  ///< SIGTERM/SIGUSR1/SIGINT to us -> trials get SIGTERM after this
  double flush_interval_s = 1;
  /// The progress line names running trials silent (no report, heartbeat or checkpoint)
  /// for this long; half of [trial] report_timeout_s when that is shorter.
  double silent_after_s = 300;
  /// The allocation's clock: no launch whose next rung lies past (job end - this).
  double end_margin_s = 300;
  /// Seconds this session may run, instead of the Slurm job's time left (tests, or a
  /// bounded session outside Slurm).
  std::optional<double> time_left_s;
  int max_step_restarts = 3;  ///< mode = "mpi": relaunches of a crashed MPI step
  /// launch = "worker": seconds a worker step has, from its srun, to connect; past them
  /// its node is given up and the study goes on without it.
  double worker_connect_timeout_s = 120;
  /// MASTER_PORTs for trials, (first, count); default: default_rendezvous_ports().
  std::optional<std::pair<int, int>> rendezvous_ports;
};

/// A running trial silent (no report, heartbeat or checkpoint) this long is named in the
/// progress line: options.silent_after_s, or half of [trial] report_timeout_s if shorter.
double silent_after_s(const RunOptions& options, const core::StudySpec& spec);

struct ActiveTrial;

class Coordinator final : public ControlHandler {
 public:
  Coordinator(const core::StudySpec& spec, RunOptions options);
  ~Coordinator() override;
  /// Runs the study to its end, or until a shutdown signal; returns the exit status
  /// (0, kMoreWorkLeft, or cancelled_exit_status(signal)).
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  // trial lifecycle (coordinator.cpp)
  void fill_slots();
  void start_trial(const core::TrialLaunch& launch, TrialResources placement);
  /// SLURMTUNE_*, PYTHONPATH and the rendezvous variables (assigned to `t` here).
  std::map<std::string, std::string> trial_environment(ActiveTrial& t);
  void reap_children();
  bool messages_drained(ActiveTrial& t);
  void finish_drained();  // reaped trials whose connections have closed since
  void finish_trial(core::TrialId trial);
  void enforce_deadlines();
  void enforce_trial_limits();
  std::string silence_message(const ActiveTrial& t, double silence_s) const;
  void end_attempt(ActiveTrial& t, const std::string& why);
  void schedule_stop(ActiveTrial& t, double grace_s);
  void on_shutdown_signal(int signal);
  void begin_shutdown(int signal);
  void tick();
  /// Each running trial's seconds since its last sign of life, for the progress line.
  std::vector<std::pair<core::TrialId, double>> quiet_times() const;
  void preflight() const;
  void warn_of_step_limit() const;
  void start_allocation_clock();
  void note_held_work();  // after next_launch: logs, and ends the session when idle

  // control plane (coordinator_messages.cpp)
  std::string on_hello(ConnectionId id, const protocol::HelloFrom& hello) override;
  std::optional<Reply> on_message(ConnectionId id, MessageType type,
                                  const core::JsonObject& body) override;
  void on_closed(ConnectionId id, const std::string& reason) override;
  Reply on_report(ActiveTrial& t, ConnectionId id, const core::JsonObject& body);
  void on_checkpoint(ActiveTrial& t, const core::JsonObject& body);
  /// PBT: clones the donor's kept checkpoint as the trial's and records the exploit.
  void exploited(core::TrialId trial, const core::Exploit& exploit);
  void carry_out_exploits();  // the pending ones, in order
  void settle_resumed_pbt();
  ActiveTrial& trial_of(ConnectionId id);

  // trial groups, [trial] mode = "mpi" (coordinator_groups.cpp)
  struct TrialGroup {
    int index = 0, ranks = 0;
    int step = 0;  // the MPI step it belongs to
    std::string nodes;
    std::optional<core::TrialId> trial;  // assigned and not yet ended
    bool waiting = false;                // sent NEXT, no ASSIGN yet
  };
  bool group_mode() const { return spec_.trial.mode == core::TrialSpec::Mode::Mpi; }
  // One MPI step running trial groups: the whole allocation (layout "split") or one
  // trial's resources (layout "steps", one group per step).
  struct GroupStep {
    ChildProcess process;
    TrialResources placement;  // layout "steps": its resources
    int groups = 0;            // groups that connected from it
    bool failing = false;      // one of its groups vanished: it gets nothing more
    // Terminated for a trial past its limits: SIGKILL at kill_at; its end does not count
    // against --max-step-restarts.
    std::optional<Clock::time_point> kill_at;
    bool ended_for_trial = false;
  };
  bool split_layout() const { return spec_.trial.layout == core::TrialSpec::Layout::Split; }
  void ensure_steps();
  void launch_step(TrialResources placement);
  std::string trial_shape() const;
  std::string on_group_hello(ConnectionId id, const protocol::GroupHello& hello);
  static std::string group_name(const TrialGroup& g);  // STEP.GROUP, for the log
  std::optional<Reply> on_group_message(ConnectionId id, TrialGroup& g, MessageType type,
                                        const core::JsonObject& body);
  void serve_groups();
  void end_group_trial(TrialGroup& g, bool ok, const std::string& error);
  void step_ended(int number);
  void signal_steps(int signal);
  ActiveTrial& register_trial(const core::TrialLaunch& launch, TrialResources placement);

  // worker steps, [resources] launch = "worker" (coordinator_workers.cpp)
  struct WorkerStep {
    std::size_t node = 0;    // ledger index
    std::string allocation;  // "": the study's own job; else the joined job's id
    ChildProcess process;    // its srun (the study's own job only)
    Clock::time_point launched;
    std::optional<ConnectionId> connection;
    bool lost = false;
  };
  bool worker_mode() const;
  void launch_workers();
  bool waiting_for_workers() const;  // a worker step started and has not connected yet
  std::string on_worker_hello(ConnectionId id, const protocol::WorkerHello& hello);
  std::optional<Reply> on_worker_message(ConnectionId id, const std::string& key, MessageType type,
                                         const core::JsonObject& body);
  void on_worker_exited(const WorkerStep& w, const protocol::Exited& exited);
  TrialProcess start_on_worker(ActiveTrial& t, const TrialProcessSpec& spec);
  void worker_lost(const std::string& key, const std::string& why);
  void reap_workers();
  void expire_unconnected_workers();  // a worker step that never said HELLO
  /// `study_over`: joined jobs' workers leave too; otherwise they wait for the next session.
  void stop_workers(bool study_over);

  // jobs that joined the study with `slurmtune join` (coordinator_joined.cpp)
  struct JoinedAllocation {
    std::optional<double> ends_at_s;       // elapsed seconds when the job ends, if known
    std::optional<double> usable_until_s;  // ... less end_margin_s: its trials move then
    bool leaving = false;
  };
  void publish_address() const;  // next to the results file, for `slurmtune join`
  std::string on_joined_hello(ConnectionId id, const protocol::JoinedHello& hello);
  void check_joinable(const std::string& job) const;
  /// The job ends (its USR1 warning, SIGTERM, or its clock): its nodes take no more
  /// trials, and its trials checkpoint and restart on other nodes.
  void allocation_leaving(const std::string& job, const std::string& why);
  void expire_joined_allocations();
  bool evicts_when_lost(const WorkerStep& w) const;  // its job is ending anyway

  const core::StudySpec& spec_;
  RunOptions options_;
  std::string study_dir_, trials_dir_, token_file_, address_;
  std::string python_path_;  // PYTHONPATH for trials: slurmtune's package first
  OpenedStudy study_;
  std::unique_ptr<StudyRecorder> recorder_;
  std::unique_ptr<core::StudyController> controller_;
  std::unique_ptr<Launcher> launcher_;
  std::unique_ptr<RendezvousAssigner> rendezvous_;
  EventLoop loop_;
  UniqueFd signals_;
  std::unique_ptr<ControlServer> server_;
  std::map<core::TrialId, std::unique_ptr<ActiveTrial>> active_;
  PbtCheckpoints pbt_;
  PendingExploits pending_exploits_;  // decided, not carried out yet
  // Exploited while their attempt still runs: that attempt's checkpoints are not theirs
  // to resume from any more (the clone is).
  std::set<core::TrialId> cloned_checkpoint_;
  std::map<ConnectionId, core::TrialId> connections_;
  SessionClock time_;  // elapsed time and, inside a job, the allocation's clock
  ProgressReport progress_;
  std::map<ConnectionId, TrialGroup> groups_;
  std::map<int, GroupStep> steps_;  // mode = "mpi": running MPI steps by number (1, 2, ...)
  // Worker steps by key: the node's name ("n3") or, for a joined job, "n3 (job 42)".
  std::map<std::string, WorkerStep> workers_;
  std::map<ConnectionId, std::string> worker_connections_;  // ... their keys by connection
  std::map<std::size_t, std::string> worker_of_node_;       // ... and by ledger node
  std::map<std::string, JoinedAllocation> joined_;          // by job id
  int step_launches_ = 0, step_restarts_ = 0;
  std::optional<Clock::time_point> step_terminate_at_, step_kill_at_;
  bool clock_announced_ = false;
  int shutdown_signals_ = 0;
  int cancel_signal_ = 0;  // SIGTERM/SIGINT seen: never exit 75 (no requeue)
  std::optional<std::pair<int, Clock::time_point>> last_signal_;
  bool done_ = false;
  bool halt_announced_ = false;
};

}  // namespace slurmtune::runtime
