#pragma once
// Where a study's run-time files live, next to its results file: STUDY.trials/ holds the
// trials' folders, the session's secret (0600), the credentials derived from it and the
// coordinator's published address, through which `slurmtune join` finds the running study.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace slurmtune::runtime {

/// "/abs/path/study.trials" for "study.h5".
inline std::string trials_dir_of(const std::string& study_file) {
  std::filesystem::path p = std::filesystem::absolute(study_file);
  p.replace_extension(".trials");
  return p.string();
}

/// Trial `trial`'s folder in `trials_dir` (trials_dir_of): "…/study.trials/trial-7".
inline std::string trial_dir_in(const std::string& trials_dir, std::uint64_t trial) {
  return trials_dir + "/trial-" + std::to_string(trial);
}

/// Where each trial's files go: its folder in STUDY.trials/, and the folder its
/// checkpoints go to: the same, or with `[checkpoints] folder` (a scratch file system, a
/// burst buffer) that folder's trial-<id>.
struct TrialFolders {
  std::string trials_dir;       ///< STUDY.trials
  std::string checkpoint_root;  ///< the folder, absolute; "": the trials' own folders
  std::string trial(std::uint64_t trial) const { return trial_dir_in(trials_dir, trial); }
  std::string checkpoints(std::uint64_t trial) const {
    return checkpoint_root.empty() ? this->trial(trial) : trial_dir_in(checkpoint_root, trial);
  }
};

/// A trial's latest checkpoint as the results file records it (recorded_path, or
/// NodePath::recorded), and the step it was saved at.
struct LatestCheckpoint {
  std::string path;
  double step = 0;
};

/// True when `inner` is `outer` or lies below it, component by component (both resolved
/// the same way): whether a trial's path stays inside its folder.
inline bool path_within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  const auto [mismatch, _] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return mismatch == outer.end();
}

/// True when `inner` lies below `outer` and is not `outer` itself: where a trial's
/// checkpoint must lie (its folder as a whole would have PBT copy the folder into itself).
inline bool path_strictly_within(const std::filesystem::path& inner,
                                 const std::filesystem::path& outer) {
  return inner != outer && path_within(inner, outer);
}

/// A checkpoint's path as the results file records it: relative to the study's folder
/// inside it, absolute outside it (a checkpoint folder on scratch); `study_dir / recorded`
/// gives it back either way.
inline std::string recorded_path(const std::filesystem::path& path,
                                 const std::filesystem::path& study_dir) {
  return path_within(path, study_dir) ? path.lexically_relative(study_dir).string() : path.string();
}

/// `[checkpoints] folder` with node_local = true, on node `node`: "{node}" replaced by
/// the node's name (a per-node path where node-local disks are mounted so, or nodes
/// emulated on one machine).
inline std::string node_folder(const std::string& folder, const std::string& node) {
  std::string out;
  for (std::size_t at = 0;;) {
    const std::size_t next = folder.find("{node}", at);
    out += folder.substr(at, next - at);
    if (next == std::string::npos) return out;
    out += node;
    at = next + 6;
  }
}

/// A checkpoint on a node's own disk as the results file records it: "NODE:/abs/path",
/// the form of scp and rsync. A checkpoint of a shared folder is recorded relative to
/// the study's folder or absolute (recorded_path), never with a colon before its first
/// "/" ([checkpoints] folder refuses a name that would give one).
struct NodePath {
  std::string node;
  std::string path;  ///< absolute, on that node
  std::string recorded() const { return node + ":" + path; }
  /// nullopt: `recorded` names a shared file.
  static std::optional<NodePath> parse(const std::string& recorded) {
    const std::size_t colon = recorded.find(':');
    if (colon == 0 || colon == std::string::npos || colon + 1 >= recorded.size() ||
        recorded[colon + 1] != '/' || recorded.find('/') < colon)
      return std::nullopt;
    return NodePath{recorded.substr(0, colon), recorded.substr(colon + 1)};
  }
};

/// "/abs/path/study.lock" for "study.h5": held by the one `slurmtune run` of the study
/// (runtime/recording/study_lock.hpp).
inline std::string lock_file_of(const std::string& study_file) {
  std::filesystem::path p = std::filesystem::absolute(study_file);
  p.replace_extension(".lock");
  return p.string();
}

/// The session's token file.
inline std::string token_file_of(const std::string& study_file) {
  return trials_dir_of(study_file) + "/token";
}

/// The folder of the credentials the session hands out (runtime/control/credential_files.hpp).
inline std::string credentials_dir_of(const std::string& study_file) {
  return trials_dir_of(study_file) + "/credentials";
}

/// The running coordinator's "HOST:PORT", one line; absent while no session runs.
inline std::string address_file_of(const std::string& study_file) {
  return trials_dir_of(study_file) + "/coordinator";
}

}  // namespace slurmtune::runtime
