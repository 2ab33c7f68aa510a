#pragma once
// [checkpoints] node_local = true: checkpoints on each node's own disk (NVMe, a RAM disk),
// which only that node's agent (its worker step) sees. The coordinator never touches
// them. It checks a checkpoint a trial names by its path alone (the agent resolves
// links whenever it acts on one) and records it as "NODE:/path"; it places an attempt
// that resumes on the node that holds its checkpoint, where it waits for a slot (the
// node gone, it resumes from scratch); it sends what the study's policy removes to
// that node's agent (REMOVE), and PBT's copies (COPY; runtime/pbt/pbt_exploits.hpp),
// keeping them until the agent has connected.
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/study/checkpoint_retention.hpp"
#include "core/study/study_controller.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/worker_messages.hpp"
#include "runtime/control/control_server.hpp"
#include "runtime/launch/launcher.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {

class NodeCheckpoints {
 public:
  using Checkpoints = std::map<core::TrialId, LatestCheckpoint>;
  /// `folder`: [checkpoints] folder as written ("{node}" not yet replaced); `results_file`:
  /// the study's, which each agent's claim on its folder names; `checkpoints`: each
  /// trial's latest, the coordinator's (a node gone clears the path of those it held).
  NodeCheckpoints(std::string folder, std::string results_file, Checkpoints& checkpoints,
                  Launcher& launcher, ControlServer& server);

  const std::string& folder() const { return folder_; }
  const std::string& results_file() const { return results_file_; }
  /// Trial `trial`'s folder on ledger node `node`.
  std::string trial_folder(core::TrialId trial, std::size_t node) const;

  /// A launch the controller gave for `placement`: where it runs. A trial that resumes
  /// from a checkpoint on a node's disk runs on that node (`placement` is released for
  /// another), or waits until a slot there is free: nullopt (controller.defer_launch).
  std::optional<TrialResources> place(core::TrialLaunch& launch, TrialResources placement,
                                      core::StudyController& controller);
  /// A trial's resources came free: a trial waiting for that node may go.
  void released(const TrialResources& placement, core::StudyController& controller);

  /// Removals the study's policy decided (recorded already) of checkpoints on nodes'
  /// disks: sent to each node's agent, or kept until it connects.
  void remove(const std::vector<core::CheckpointRemoval>& removals);
  using CopyDone = std::function<void(const protocol::CheckpointCopied&)>;
  /// PBT's copy on node `node`'s disk (its `id` is set here): sent to the node's agent, or
  /// kept until it connects. `done` hears COPIED; with the node lost or not in this job,
  /// at once, with the error.
  void copy(const std::string& node, protocol::CopyCheckpoint request, CopyDone done);
  /// COPIED from node `node`'s agent: ProtocolError when it was not asked for.
  void copied(const std::string& node, const protocol::CheckpointCopied& reply);

  /// Node `name`'s agent said HELLO on `connection` (what waited for it goes at the next
  /// send_waiting: its WELCOME must go first).
  void agent_connected(const std::string& name, ConnectionId connection,
                       core::StudyController& controller);
  /// Sends the removals that waited for agents that have connected since.
  void send_waiting();
  /// Node `name`'s agent is gone, and with it (for slurmtune) what its disk holds: the
  /// trials whose checkpoint is there resume from scratch.
  void agent_lost(const std::string& name, core::StudyController& controller);

 private:
  std::optional<std::size_t> node_index(const std::string& name);
  bool serves(const std::string& node);  // in this job, and not lost this session
  void forget(core::TrialId trial, const std::string& why);
  void send_or_keep(const std::string& node, protocol::MessageType type, std::string payload);
  void fail_copies_of(const std::string& node, const std::string& why);
  void let_waiting_go(std::size_t node, std::size_t how_many, core::StudyController& controller);

  std::string folder_, results_file_;
  Checkpoints& checkpoints_;
  Launcher& launcher_;
  ControlServer& server_;
  std::map<std::string, std::size_t> node_of_name_;  // the ledger's, filled as names are met
  std::map<std::string, ConnectionId> agents_;       // connected, by node name
  std::set<std::string> lost_;                       // agents gone this session
  // Trials whose launch waits for a slot on their checkpoint's node, by ledger node.
  std::map<std::size_t, std::deque<core::TrialId>> waiting_;
  // REMOVEs and COPYs for agents that have not connected yet, in order, by node name.
  std::map<std::string, std::vector<std::pair<protocol::MessageType, std::string>>> unsent_;
  struct PendingCopy {
    std::string node;
    CopyDone done;
  };
  std::map<std::uint64_t, PendingCopy> copies_;  // asked for, no COPIED yet, by id
  std::uint64_t next_copy_ = 1;
};

/// WELCOME for node `node`'s worker (of joined job `allocation`; "": the study's own job):
/// with node_local checkpoints (`checkpoints` not null), the folder it claims and serves.
std::string worker_welcome(const std::string& node, const std::string& allocation,
                           const NodeCheckpoints* checkpoints);

/// A CHECKPOINT's `named` path for a trial whose folder on its node's disk is
/// `trial_folder`: absolute, and strictly inside that folder once "." and ".." are taken
/// out (links are the agent's to resolve), its record "NODE:/path"; nullopt when it is not
/// there (the trial's own folder in STUDY.trials/ may hold it: checked as before).
std::optional<std::string> node_local_record(const std::string& named,
                                             const std::string& trial_folder,
                                             const std::string& node);

}  // namespace slurmtune::runtime
