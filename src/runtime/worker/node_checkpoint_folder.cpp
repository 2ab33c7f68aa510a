#include "runtime/worker/node_checkpoint_folder.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "protocol/wire/protocol.hpp"
#include "runtime/coordinator/checkpoint_path.hpp"
#include "runtime/log.hpp"
#include "runtime/recording/checkpoint_removal.hpp"
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
  std::vector<core::CheckpointRemoval> removals;
  for (const auto& path : message.paths)
    removals.push_back(core::CheckpointRemoval{message.trial, 0, path});
  files.post([folders, removals = std::move(removals)]() -> BackgroundWork::Finish {
    std::vector<std::string> errors;
    for (const auto& r : removals)
      if (auto error = remove_checkpoint_files("/", folders, r); !error.empty())
        errors.push_back("trial " + std::to_string(r.trial) + ": checkpoint " + r.path +
                         " not removed: " + error);
    return [errors = std::move(errors)] {
      for (const auto& e : errors)
        log_line(e);
    };
  });
}

}  // namespace slurmtune::runtime
