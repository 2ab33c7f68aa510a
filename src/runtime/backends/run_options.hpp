#pragma once
// Options of `slurmtune run` (src/cli/running/run_command.cpp) for one session: what the
// coordinator and its launch backends read.
#include <optional>
#include <string>
#include <utility>

#include "core/study/study_spec.hpp"
#include "runtime/control/control_server.hpp"
#include "runtime/launch/launcher.hpp"

namespace slurmtune::runtime {

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
  /// Seconds between decision snapshots in the results file (0: none), from which a
  /// resume starts instead of replaying every report (store/decision_snapshots.hpp).
  double snapshot_interval_s = 300;
  /// Halt once this many attempts in a row failed alike before any report
  /// (core::StudyController::set_fail_fast); 0: never.
  std::size_t fail_fast = 3;
  /// Write the session's secret where `slurmtune join` finds it (STUDY.trials/token):
  /// only then can other jobs join, and only then can a trial read it.
  bool accept_joins = false;
  /// The progress line names running trials silent (no report, heartbeat or checkpoint)
  /// for this long; half of [trial] report_timeout_s when that is shorter.
  double silent_after_s = 300;
  /// The allocation's clock: no launch whose next rung lies past (job end - this).
  double end_margin_s = 300;
  /// Seconds this session may run, instead of the Slurm job's time left (tests, or a
  /// bounded session outside Slurm).
  std::optional<double> time_left_s;
  int max_step_restarts = 3;  ///< mode = "mpi": relaunches of a crashed MPI step
  /// Job steps started a second at most (a step per trial; trials of several ranks on
  /// worker launch), so that slurmctld is not asked for thousands at once.
  double step_launch_rate = 50;
  /// launch = "worker": seconds a worker step has, from its srun, to connect; past them
  /// its node is given up and the study goes on without it.
  double worker_connect_timeout_s = 120;
  /// launch = "worker": nodes per relay group (the relay included), 0 for none; default
  /// relay_fanout_for(): none up to kRelaysAbove nodes (runtime/worker/relay_tree.hpp).
  std::optional<std::size_t> relay_fanout;
  /// MASTER_PORTs for trials, (first, count); default: default_rendezvous_ports().
  std::optional<std::pair<int, int>> rendezvous_ports;
};

/// A running trial silent (no report, heartbeat or checkpoint) this long is named in the
/// progress line: options.silent_after_s, or half of [trial] report_timeout_s if shorter.
double silent_after_s(const RunOptions& options, const core::StudySpec& spec);

}  // namespace slurmtune::runtime
