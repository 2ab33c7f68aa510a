#pragma once
// The worker steps that start trials as their own children on the coordinator's
// LAUNCH (doc/slurm.md#worker-steps): one per node of the study's own job with
// [resources] launch = "worker", and those of jobs that joined the study with
// `slurmtune join` (doc/slurm.md#joining-jobs), whose nodes enter the ledger tagged with
// their job. A node takes trials once its worker has said HELLO; a worker that goes away
// fails the trials it ran (retried elsewhere), or, when its job is ending, has them
// restart from their checkpoints. Part of ProcessBackend.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "protocol/session_messages.hpp"
#include "protocol/worker_messages.hpp"
#include "runtime/backends/launch_backend.hpp"
#include "runtime/launch/child_process.hpp"
#include "runtime/launch/step_cancels.hpp"
#include "runtime/launch/trial_process.hpp"

namespace slurmtune::runtime {

class WorkerPool {
 public:
  /// `finish_trial`: classifies an attempt whose process ended (the backend's);
  /// `study_done`: whether the backend has found nothing more to do.
  /// `step_cancels`: the backend's, for the steps of several ranks a lost agent leaves.
  WorkerPool(const BackendContext& context, std::function<void(core::TrialId)> finish_trial,
             const bool& study_done, StepCancels& step_cancels);

  /// [resources] launch = "worker": one worker step per node of the study's own job.
  void launch_own_workers();
  /// A worker step of the study's own job started and has not connected yet.
  bool waiting() const;
  /// Whether the trials of ledger node `node` start on its worker (trials of one rank;
  /// those of several start as their own steps, carried by their nodes' agents).
  bool serves(std::size_t node) const {
    return agents_folder_.empty() && worker_of_node_.contains(node);
  }
  /// Starts attempt `t` (placed on a node this pool serves) with LAUNCH to its worker,
  /// which derives the attempt's credential (`t.credential_host` says from what).
  TrialProcess start(ActiveTrial& t, const TrialProcessSpec& spec);
  /// Trials of several ranks on worker launch: where the agents publish their addresses
  /// (SLURMTUNE_AGENTS for the trials' steps); empty otherwise.
  const std::string& agents_folder() const { return agents_folder_; }
  /// Tells the agent of each of `t`'s nodes that its ranks may connect through it (ADMIT),
  /// or, once the attempt is over, no longer. Nothing without agents_folder().
  void admit(const ActiveTrial& t, bool admit) const;

  std::string on_hello(ConnectionId id, const protocol::WorkerHello& hello);
  std::string on_hello(ConnectionId id, const protocol::JoinedHello& hello);
  bool owns(ConnectionId id) const { return connections_.contains(id); }
  /// A HELLO on a channel of worker `via` (its node agent): only a rank of a trial
  /// placed on that worker's node; ProtocolError otherwise.
  void check_routed(ConnectionId via, const protocol::HelloFrom& hello) const;
  std::optional<Reply> on_message(ConnectionId id, protocol::MessageType type,
                                  const protocol::JsonObject& body);
  void on_closed(ConnectionId id, const std::string& reason);
  /// Worker steps of the study's own job whose srun ended.
  void reap();
  /// Workers that never connected, joined jobs whose clock runs out.
  void tick();
  /// `study_over`: joined jobs' workers leave too; otherwise they wait for the next session.
  void stop(bool study_over);

 private:
  using Clock = std::chrono::steady_clock;
  struct WorkerStep {
    std::size_t node = 0;    // ledger index
    std::string allocation;  // "": the study's own job; else the joined job's id
    std::size_t step = 0;    // its srun in steps_ (the study's own job only)
    Clock::time_point launched;
    std::optional<ConnectionId> connection;
    bool lost = false;
  };
  struct JoinedAllocation {
    std::optional<double> ends_at_s;       // elapsed seconds when the job ends, if known
    std::optional<double> usable_until_s;  // ... less end_margin_s: its trials move then
    bool leaving = false;
  };

  void on_exited(const WorkerStep& w, const protocol::Exited& exited);
  void lost(const std::string& key, const std::string& why);
  /// The lost worker's trials end; so do the steps of several ranks with ranks on its
  /// node (they are retried).
  void end_trials_of(const WorkerStep& w, const std::string& key, const std::string& why);
  void expire_unconnected();  // a worker step that never said HELLO
  void check_joinable(const std::string& job) const;
  /// The job ends (its USR1 warning, SIGTERM, or its clock): its nodes take no more
  /// trials, and its trials checkpoint and restart on other nodes.
  void allocation_leaving(const std::string& job, const std::string& why);
  void expire_joined();
  /// Ends the srun of `step` once none of its workers serves any more.
  void end_step_if_unused(std::size_t step);
  bool evicts_when_lost(const WorkerStep& w) const;  // its job is ending anyway

  BackendContext context_;
  std::function<void(core::TrialId)> finish_trial_;
  const bool& study_done_;
  StepCancels& step_cancels_;
  bool own_workers_ = false;      // launch = "worker": losing them all ends the session
  std::size_t relay_fanout_ = 0;  // nodes per relay of the own workers' steps; 0: none
  std::string agents_folder_;     // trials of several ranks: their agents' addresses
  // Worker steps by key: the node's name ("n3") or, for a joined job, "n3 (job 42)".
  std::map<std::string, WorkerStep> workers_;
  // ... their keys by connection: asked of every message (owns), never walked
  std::unordered_map<ConnectionId, std::string> connections_;
  std::map<std::size_t, std::string> worker_of_node_;  // ... and by ledger node
  std::map<std::string, JoinedAllocation> joined_;     // by job id
  // The sruns of the study's own workers: one per shape of node (cores, GPUs), a task
  // per node each.
  std::vector<ChildProcess> steps_;
};

/// Why a joined job cannot serve a study whose trials have `ranks` ranks (in MPI trial
/// groups when `in_groups`); "" when it can.
std::string joined_job_refusal(std::int64_t ranks, bool in_groups);

}  // namespace slurmtune::runtime
