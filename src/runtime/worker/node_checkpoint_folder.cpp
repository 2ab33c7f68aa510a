#include "runtime/worker/node_checkpoint_folder.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "protocol/wire/protocol.hpp"
#include "runtime/checkpoint_files.hpp"
#include "runtime/log.hpp"
#include "runtime/pbt/pbt_checkpoints.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;
namespace {

// Trial `trial`'s folder in `root`, made (0700) if missing: Error when a link takes it (or
// `inside`, a path that must lie in it) out of `root` once resolved.
void check_trial_folder(const std::string& root, core::TrialId trial,
                        const std::string& inside = {}) {
  const fs::path folder = trial_dir_in(root, trial);
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
    throw Error("cannot make " + folder.string() + ": " + std::strerror(errno));
  std::error_code ec;
  const fs::path resolved = fs::canonical(folder, ec);
  if (ec || resolved.parent_path() != fs::path(root))
    throw Error(folder.string() + " does not resolve to a folder in " + root);
  if (!inside.empty()) {
    const fs::path path = fs::canonical(inside, ec);
    if (ec) throw Error("cannot read " + inside + ": " + ec.message());
    if (!path_strictly_within(path, resolved))
      throw Error(inside + " resolves to " + path.string() + ", outside " + resolved.string());
  }
}

// A clone (runtime/pbt/pbt_checkpoints.hpp) as COPY asks: here, or staged through the
// trial's folder in `trials_dir` (STUDY.trials, which every node sees) on its way from the
// donor's node to the trial's.
PbtCheckpoints::Copy clone_on_disk(const std::string& root, const std::string& trials_dir,
                                   const protocol::CopyCheckpoint& message) {
  using Clone = protocol::CopyCheckpoint::Clone;
  core::Exploit exploit;  // what a clone reads of it: whose kept copy, at which step
  exploit.donor = *message.donor;
  exploit.donor_step = message.step;
  const PbtCheckpoints here(root, TrialFolders{root, {}});
  const PbtCheckpoints shared(trials_dir, TrialFolders{trials_dir, {}});
  if (message.clone != Clone::Staged) check_trial_folder(root, exploit.donor);
  if (message.clone != Clone::Here) check_trial_folder(trials_dir, message.trial);
  if (message.clone != Clone::Stage) check_trial_folder(root, message.trial);
  switch (message.clone) {
    case Clone::Here:
      return here.clone(message.trial, exploit);
    case Clone::Stage:
      return shared.clone_from(here.kept_dir(exploit.donor, exploit.donor_step), message.trial,
                               exploit);
    case Clone::Staged: {
      const auto staged = shared.clone_dir(message.trial, exploit);
      auto made = here.clone_from(staged, message.trial, exploit);
      std::error_code ignored;  // a staged copy left behind goes with the trial's next clone
      fs::remove_all(staged, ignored);
      return made;
    }
  }
  throw Error("COPY: an unknown kind of clone");
}

protocol::CheckpointCopied copy_on_disk(const std::string& root, const std::string& trials_dir,
                                        const protocol::CopyCheckpoint& message) {
  protocol::CheckpointCopied copied{message.id, {}, 0, {}, {}};
  try {
    if (message.donor) {
      const auto clone = clone_on_disk(root, trials_dir, message);
      copied.path = clone.absolute.string();
      copied.bytes = clone.how.bytes;
      copied.how = clone.how.describe();
    } else {
      // PBT's own copies, with this node's folder as the trials' checkpoint folders.
      const PbtCheckpoints here(root, TrialFolders{root, {}});
      check_trial_folder(root, message.trial, message.source);
      const auto kept = message.if_missing
                            ? here.keep_if_missing(message.trial, message.step, message.source)
                            : std::optional(here.keep(message.trial, message.step, message.source));
      copied.path = here.kept_dir(message.trial, message.step).string();
      copied.bytes = kept ? kept->bytes : 0;
      copied.how = kept ? kept->describe() : std::string(protocol::kKeptAlready);
    }
  } catch (const Error& e) {
    copied.error = e.what();
  }
  return copied;
}

}  // namespace

NodeCheckpointFolder::NodeCheckpointFolder(const std::string& folder, const std::string& node,
                                           const std::string& study)
    : root_(claim_checkpoint_folder(node_folder(folder, node), "/", study)),
      trials_dir_(fs::weakly_canonical(trials_dir_of(study)).string()) {}

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

void NodeCheckpointFolder::copy(
    const protocol::CopyCheckpoint& message, BackgroundWork& files,
    std::function<void(const protocol::CheckpointCopied&)> reply) const {
  files.post([root = root_, trials_dir = trials_dir_, message,
              reply = std::move(reply)]() -> BackgroundWork::Finish {
    auto copied = copy_on_disk(root, trials_dir, message);  // here, on the helper thread
    return [reply, copied = std::move(copied)] { reply(copied); };
  });
}

}  // namespace slurmtune::runtime
