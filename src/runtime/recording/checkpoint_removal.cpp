#include "runtime/recording/checkpoint_removal.hpp"

#include <system_error>
#include <utility>

#include "runtime/backends/node_checkpoints.hpp"
#include "runtime/log.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;
std::string remove_checkpoint_files(const fs::path& study_dir, const TrialFolders& folders,
                                    const core::CheckpointRemoval& removal) {
  std::error_code ec;
  const fs::path own = fs::weakly_canonical(folders.trial(removal.trial), ec);
  if (ec) return "cannot resolve the trial's folder: " + ec.message();
  const fs::path elsewhere = fs::weakly_canonical(folders.checkpoints(removal.trial), ec);
  if (ec) return "cannot resolve the trial's checkpoint folder: " + ec.message();
  const fs::path named = (study_dir / removal.path).lexically_normal();
  if (!fs::exists(fs::symlink_status(named, ec))) return {};
  // The folder that holds it, resolved: the last component itself may be a link, which
  // remove_all removes without following.
  const fs::path parent = fs::weakly_canonical(named.parent_path(), ec);
  if (ec) return "cannot resolve " + named.parent_path().string() + ": " + ec.message();
  const fs::path target = parent / named.filename();
  if (!path_strictly_within(target, own) && !path_strictly_within(target, elsewhere))
    return named.string() + " resolves to " + target.string() +
           ", outside the trial's folders: left alone";
  fs::remove_all(target, ec);
  if (ec) return "cannot remove " + target.string() + ": " + ec.message();
  return {};
}

CheckpointRemover::CheckpointRemover(core::CheckpointRetention retention,
                                     store::StudyWriter& writer, BackgroundWork& files,
                                     fs::path study_dir, TrialFolders folders)
    : retention_(std::move(retention)),
      writer_(writer),
      files_(files),
      study_dir_(std::move(study_dir)),
      folders_(std::move(folders)) {}

void CheckpointRemover::recorded(core::TrialId trial, double step, const std::string& relative,
                                 std::uint64_t bytes) {
  remove(retention_.saved(trial, step, relative, bytes));
}

void CheckpointRemover::ended(core::TrialId trial, std::optional<double> best) {
  remove(retention_.ended(trial, best));
}

void CheckpointRemover::remove(const std::vector<core::CheckpointRemoval>& removals) {
  if (removals.empty()) return;
  const double now = store::unix_time_s();
  std::vector<core::CheckpointRemoval> shared;
  for (const auto& r : removals) {
    writer_.checkpoint_removed(r, now);
    if (!nodes_ || !NodePath::parse(r.path)) shared.push_back(r);
  }
  if (nodes_) nodes_->remove(removals);  // those on nodes' own disks
  if (shared.empty()) return;
  files_.post([study_dir = study_dir_, folders = folders_,
               removals = std::move(shared)]() -> BackgroundWork::Finish {
    std::vector<std::string> errors;
    for (const auto& r : removals)
      if (auto error = remove_checkpoint_files(study_dir, folders, r); !error.empty())
        errors.push_back("trial " + std::to_string(r.trial) + ": checkpoint " + r.path +
                         " not removed: " + error);
    return [errors = std::move(errors)] {
      for (const auto& e : errors)
        log_line(e);
    };
  });
}

}  // namespace slurmtune::runtime
