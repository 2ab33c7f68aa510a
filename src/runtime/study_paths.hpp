#pragma once
// Where a study's run-time files live, next to its results file: STUDY.trials/ holds the
// trials' folders, the session's token (0600) and the coordinator's published address,
// through which `slurmtune join` finds the running study.
#include <filesystem>
#include <string>

namespace slurmtune::runtime {

/// "/abs/path/study.trials" for "study.h5".
inline std::string trials_dir_of(const std::string& study_file) {
  std::filesystem::path p = std::filesystem::absolute(study_file);
  p.replace_extension(".trials");
  return p.string();
}

/// The session's token file.
inline std::string token_file_of(const std::string& study_file) {
  return trials_dir_of(study_file) + "/token";
}

/// The running coordinator's "HOST:PORT", one line; absent while no session runs.
inline std::string address_file_of(const std::string& study_file) {
  return trials_dir_of(study_file) + "/coordinator";
}

}  // namespace slurmtune::runtime
