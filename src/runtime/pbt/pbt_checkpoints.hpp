#pragma once
// PBT's checkpoints in `slurmtune run`. A trial program may overwrite or delete its own
// checkpoints at any time, so the checkpoint the scheduler asked a trial for (its state
// at a perturbation point, which others may clone) is copied where only slurmtune
// writes: STUDY.trials/trial-N/pbt-kept/step-S/NAME, the trial's latest only. An
// exploiting trial gets its own copy of the donor's, STUDY.trials/trial-T/
// pbt-from-trial-D-step-S/NAME, as its checkpoint: no trial ever reads or writes
// another's files, and a donor that goes on training cannot change what was cloned.
// Copies are reflinks where the file system can (runtime/pbt/file_copy.hpp), and are
// made on the coordinator's helper thread (runtime/pbt/pbt_exploits.hpp): these
// functions touch only the file system.
#include <filesystem>
#include <optional>
#include <string>

#include "core/schedulers/scheduler.hpp"
#include "runtime/pbt/file_copy.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {

class PbtCheckpoints {
 public:
  struct Copy {
    std::string relative;  ///< as the results file records it (runtime::recorded_path)
    std::filesystem::path absolute;
    TreeCopy how;  ///< its bytes, and how its files were copied
  };

  /// Copies go to each trial's checkpoint folder (`folders.checkpoints`).
  PbtCheckpoints(std::filesystem::path study_dir, TrialFolders folders);

  /// Keeps the trial's checkpoint at `step` (`source`, a file or a folder); the trial's
  /// older kept copies go. Throws Error (naming the paths) when the copy fails or the
  /// trial wrote the checkpoint meanwhile.
  TreeCopy keep(core::TrialId trial, double step, const std::filesystem::path& source) const;
  /// keep(), unless the kept copy at `step` is there already (nullopt): a resumed
  /// study's, whose last session may or may not have finished it (a kept copy is
  /// renamed into place whole, so one that is there is complete).
  std::optional<TreeCopy> keep_if_missing(core::TrialId trial, double step,
                                          const std::filesystem::path& source) const;
  /// The exploiting trial's copy of the donor's kept checkpoint; the trial's earlier
  /// clones go. Throws Error when the kept copy is missing or the copy fails.
  Copy clone(core::TrialId trial, const core::Exploit& exploit) const;
  /// clone() from the kept copy in `kept` (the donor's kept_dir, wherever it lies: another
  /// node's folder, or a copy staged on the way to this one).
  Copy clone_from(const std::filesystem::path& kept, core::TrialId trial,
                  const core::Exploit& exploit) const;
  /// Where clone() puts the trial's clone of `exploit`'s donor's kept copy (a folder).
  std::filesystem::path clone_dir(core::TrialId trial, const core::Exploit& exploit) const;
  /// Where keep() puts the trial's checkpoint at `step`.
  std::filesystem::path kept_dir(core::TrialId trial, double step) const;

 private:
  std::filesystem::path checkpoint_dir(core::TrialId trial) const;  // folders_.checkpoints

  std::filesystem::path study_dir_;
  TrialFolders folders_;
};

}  // namespace slurmtune::runtime
