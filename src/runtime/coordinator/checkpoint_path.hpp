#pragma once
// Where a trial may keep its checkpoints: inside its own folder, STUDY.trials/trial-<id>/,
// or its folder in the study's checkpoint folder (`[checkpoints] folder`), and nowhere
// else. A trial names its checkpoint over the control plane; the name is
// resolved the way the file system will (symbolic links, "..") before it is trusted,
// because slurmtune later copies it (PBT) and hands it to a resumed attempt.
#include <filesystem>
#include <string>

#include "runtime/checkpoint_files.hpp"

namespace slurmtune::runtime {

struct CheckpointPath {
  std::filesystem::path resolved;  ///< absolute, every link and ".." resolved
  std::string relative;            ///< to the results file's folder, as the results file keeps it
};

/// Resolves `named` (absolute, or relative to `trial_dir`) and checks that it lies
/// strictly inside `trial_dir` or `checkpoint_dir` (the trial's folder in the study's
/// checkpoint folder; `trial_dir` again without one) and outside slurmtune's own
/// `pbt-kept` folder in either. Throws ProtocolError saying why otherwise. `relative` is
/// absolute for a checkpoint outside the study's folder (in the checkpoint folder).
CheckpointPath confine_checkpoint(const std::string& named, const std::filesystem::path& trial_dir,
                                  const std::filesystem::path& checkpoint_dir,
                                  const std::filesystem::path& study_dir);
inline CheckpointPath confine_checkpoint(const std::string& named,
                                         const std::filesystem::path& trial_dir,
                                         const std::filesystem::path& study_dir) {
  return confine_checkpoint(named, trial_dir, trial_dir, study_dir);
}

}  // namespace slurmtune::runtime
