#pragma once
// A worker's side of [checkpoints] node_local: the folder on its node's own disk, which
// only it (and the trials it starts) can see. It claims the folder for the study as the
// coordinator claims a shared one (a file .slurmtune-study naming the results file),
// makes each trial's folder there before the trial starts (LAUNCH), and removes what the
// study's policy drops (REMOVE) and makes PBT's copies (COPY: a trial's kept checkpoint,
// an exploiting trial's clone of its donor's, runtime/pbt/pbt_checkpoints.hpp) on a
// helper thread, so that unlinking or copying gigabytes never stalls the node's traffic.
// Every path is checked once its links are resolved on this node: nothing outside
// trial-<id> is read, made or removed.
#include <functional>
#include <string>

#include "protocol/worker_messages.hpp"
#include "runtime/control/background_work.hpp"

namespace slurmtune::runtime {

class NodeCheckpointFolder {
 public:
  /// `folder` as the study file writes it ("{node}" replaced by `node` here), for the
  /// results file `study`. Throws InputError when another study claimed it, or it cannot
  /// be made.
  NodeCheckpointFolder(const std::string& folder, const std::string& node,
                       const std::string& study);

  const std::string& root() const { return root_; }
  /// LAUNCH's checkpoint_dir, made (0700) if missing; ProtocolError when it is not a
  /// trial's folder directly in root(), or cannot be made.
  void make_trial_folder(const std::string& dir) const;
  /// REMOVE: the paths removed on `files`' thread; what could not be is logged.
  void remove(const protocol::Remove& message, BackgroundWork& files) const;
  /// COPY: made on `files`' thread, in order with the removals; `reply` gets COPIED on
  /// the loop's thread once it is done (or failed: its error names the paths).
  void copy(const protocol::CopyCheckpoint& message, BackgroundWork& files,
            std::function<void(const protocol::CheckpointCopied&)> reply) const;

 private:
  std::string root_;        // resolved
  std::string trials_dir_;  // STUDY.trials, which every node sees: clones staged there
};

}  // namespace slurmtune::runtime
