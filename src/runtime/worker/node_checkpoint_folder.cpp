#include "runtime/worker/node_checkpoint_folder.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "protocol/wire/protocol.hpp"
#include "runtime/checkpoint_files.hpp"
#include "runtime/log.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;

NodeCheckpointFolder::NodeCheckpointFolder(const std::string& folder, const std::string& node,
                                           const std::string& study)
    : root_(claim_checkpoint_folder(node_folder(folder, node), "/", study)) {}

void NodeCheckpointFolder::make_trial_folder(const std::string& dir) const {
  const fs::path path(dir);
  if (path.parent_path() != fs::path(root_) || !path.filename().string().starts_with("trial-"))
    throw protocol::ProtocolError("LAUNCH: 'checkpoint_dir' " + dir +
                                  " is not a trial's folder in this node's checkpoint folder " +
                                  root_);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw protocol::ProtocolError("cannot make " + dir + ": " + std::strerror(errno));
}

void NodeCheckpointFolder::remove(const protocol::Remove& message, BackgroundWork& files) const {
  // remove_checkpoint_files with this node's folder as the trials' folder: each path
  // must still lie inside trial-<id> there once every link is resolved.
  const TrialFolders folders{root_, ""};
  files.post([folders, trial = message.trial, paths = message.paths]() -> BackgroundWork::Finish {
    std::vector<std::string> errors;
    for (const auto& path : paths)
      if (auto error = remove_checkpoint_files("/", folders, trial, path); !error.empty())
        errors.push_back("trial " + std::to_string(trial) + ": checkpoint " + path +
                         " not removed: " + error);
    return [errors = std::move(errors)] {
      for (const auto& e : errors)
        log_line(e);
    };
  });
}

}  // namespace slurmtune::runtime
