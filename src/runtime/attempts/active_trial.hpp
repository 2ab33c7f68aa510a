#pragma once
// One trial attempt the coordinator is running: its process (srun, mpirun or the
// program itself), its resources, and what its clients have said.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/study/study_controller.hpp"
#include "protocol/session_messages.hpp"
#include "runtime/control/control_server.hpp"
#include "runtime/launch/child_process.hpp"
#include "runtime/launch/launcher.hpp"
#include "runtime/launch/rendezvous.hpp"
#include "runtime/launch/step_cancels.hpp"
#include "runtime/launch/trial_process.hpp"

namespace slurmtune::runtime {

struct ActiveTrial {
  using TimePoint = std::chrono::steady_clock::time_point;

  core::TrialId trial = 0;
  std::uint64_t attempt = 0;
  std::uint64_t launch = 0;  ///< this session's launch number: its credential covers it alone
  core::TrialLaunch::Kind kind = core::TrialLaunch::Kind::Start;
  std::string dir, stderr_path, checkpoint, params_json;
  std::string checkpoint_dir;   // where its checkpoints go: `dir`, or its [checkpoints] folder's
  std::string credential_file;  ///< its ranks' SLURMTUNE_TOKEN_FILE (0600); "": none written
  /// The node whose worker step derived its credential (it started the attempt); "":
  /// the credential is the secret's (credential_file, or a joined job's worker).
  std::string credential_host;
  std::optional<double> checkpoint_step;      // the step `checkpoint` was saved at
  std::optional<TrialRendezvous> rendezvous;  // MASTER_ADDR/MASTER_PORT held for it
  std::uintmax_t stderr_offset = 0;           // where this attempt's stderr begins
  TrialResources placement;
  TrialProcess process;
  TimePoint started;
  TimePoint last_sign;  // launch, then the last report, heartbeat or checkpoint
  std::string fault;    // why the coordinator ended this attempt (time limit, silence)
  std::optional<ConnectionId> reporter;  // the connection of trial rank 0
  std::optional<ConnectionId> group;     // mode = "mpi": the trial group running it
  std::string slurm_step;                // "JOBID.STEPID" once a client said it
  bool bye_failed = false, lost_connection = false;
  std::string bye_error;
  std::optional<TimePoint> terminate_at, kill_at;
  std::optional<TimePoint> exited_at;  // its process ended; its connections were still open

  /// What a trial learns when it starts (WELCOME, or ASSIGN to a trial group).
  protocol::TrialAssignment assignment() const;
  /// The last lines of this attempt's stderr (at most 2 KiB), for the failure record.
  std::string stderr_tail() const;
  /// SIGKILL to the process group, and to the Slurm step when its id is known (killing
  /// srun alone may leave the step's tasks running until Slurm notices; `cancels` asks
  /// Slurm without waiting); never to a worker's step, which other trials share.
  void hard_kill(StepCancels& cancels) const;
};

}  // namespace slurmtune::runtime
