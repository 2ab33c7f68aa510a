#pragma once
// A study's checkpoint folders on disk, for whoever does the file work: the coordinator
// for a folder every node mounts, a node's worker for its own disk ([checkpoints]
// node_local). A folder is claimed for one results file; a removal touches only what
// still lies inside its trial's folder once every link is resolved.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/trial_id.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {

/// The study's checkpoint folder (`[checkpoints] folder`, relative to the study file's
/// folder `study_file_dir`), absolute, made (0700) where it does not exist, and claimed
/// for the results file `results_file` by a file `.slurmtune-study` in it that names it:
/// a folder another study claimed is refused (InputError naming the field), so two
/// studies never mix their trial-<id> folders.
std::string claim_checkpoint_folder(const std::string& folder,
                                    const std::filesystem::path& study_file_dir,
                                    const std::string& results_file);

/// Removes trial `trial`'s checkpoint `relative` (to `study_dir`, or absolute) if it still lies
/// inside its trial's folder or its checkpoint folder (`folders`) once every link is resolved (a
/// trial could have swapped a folder for a link since it named the checkpoint); a path that is gone
/// already is no error.
/// Returns why not, or an empty string. Touches only the file system.
std::string remove_checkpoint_files(const std::filesystem::path& study_dir,
                                    const TrialFolders& folders, core::TrialId trial,
                                    const std::string& relative);

/// remove_checkpoint_files for each (trial, path) of `removals`: a line for the log for each
/// one not removed ("trial 3: checkpoint PATH not removed: why").
std::vector<std::string> remove_checkpoints(
    const std::filesystem::path& study_dir, const TrialFolders& folders,
    const std::vector<std::pair<core::TrialId, std::string>>& removals);

}  // namespace slurmtune::runtime
