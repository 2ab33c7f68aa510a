#pragma once
// Where a trial may keep its checkpoints: inside its own folder, STUDY.trials/trial-<id>/,
// or its folder in the study's checkpoint folder (`[checkpoints] folder`), and nowhere
// else. A trial names its checkpoint over the control plane; the name is
// resolved the way the file system will (symbolic links, "..") before it is trusted,
// because slurmtune later copies it (PBT) and hands it to a resumed attempt.
#include <filesystem>
#include <string>
#include <unordered_map>

#include "runtime/checkpoint_files.hpp"

namespace slurmtune::runtime {

struct CheckpointPath {
  std::filesystem::path resolved;  ///< absolute, every link and ".." resolved
  std::string relative;            ///< to the results file's folder, as the results file keeps it
};

/// Where a study's trials may keep their checkpoints, with the folders resolved once:
/// the study's folder, and the folders that hold the trials' own (its trials folder, its
/// checkpoint folder, a node's). A trial's folder is its resolved parent and its name,
/// which slurmtune made, so a trial that swaps its folder for a link does not move where
/// its checkpoints may lie; only what a checkpoint names below it is resolved each time.
/// (Resolving all of it per CHECKPOINT, each component a stat and a readlink, took 8 %
/// of the loop's time at 2,048 nodes.) One entry a parent: a handful, or one a node.
class CheckpointConfinement {
 public:
  explicit CheckpointConfinement(std::filesystem::path study_dir)
      : study_dir_(std::move(study_dir)) {}

  /// Resolves `named` (absolute, or relative to `trial_dir`) and checks that it lies
  /// strictly inside `trial_dir` or `checkpoint_dir` (the trial's folder in the study's
  /// checkpoint folder; `trial_dir` again without one) and outside slurmtune's own
  /// `pbt-kept` folder in either. Throws ProtocolError saying why otherwise. `relative`
  /// is absolute for a checkpoint outside the study's folder (in the checkpoint folder).
  CheckpointPath confine(const std::string& named, const std::filesystem::path& trial_dir,
                         const std::filesystem::path& checkpoint_dir);

 private:
  /// `folder` resolved as its resolved parent and its own name.
  std::filesystem::path folder(const std::filesystem::path& folder);

  std::filesystem::path study_dir_, study_resolved_;
  std::unordered_map<std::string, std::filesystem::path> parents_;
};

}  // namespace slurmtune::runtime
