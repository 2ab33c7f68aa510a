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
  std::vector<std::pair<core::TrialId, std::string>> removals;
  for (const auto& path : message.paths)
    removals.emplace_back(message.trial, path);
  files.post([folders = TrialFolders{root_, ""},
              removals = std::move(removals)]() -> BackgroundWork::Finish {
    auto errors = remove_checkpoints("/", folders, removals);  // here, on the helper thread
    return [errors = std::move(errors)] {
      for (const auto& e : errors)
        log_line(e);
    };
  });
}

}  // namespace slurmtune::runtime
