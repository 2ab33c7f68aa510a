#include "runtime/recording/checkpoint_removal.hpp"

#include <system_error>
#include <utility>

#include "runtime/log.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;
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
  std::vector<std::pair<core::TrialId, std::string>> shared;
  for (const auto& r : removals) {
    writer_.checkpoint_removed(r, now);
    if (!to_nodes_ || !NodePath::parse(r.path)) shared.emplace_back(r.trial, r.path);
  }
  if (to_nodes_) to_nodes_(removals);  // those on nodes' own disks
  if (shared.empty()) return;
  files_.post([study_dir = study_dir_, folders = folders_,
               shared = std::move(shared)]() -> BackgroundWork::Finish {
    auto errors = remove_checkpoints(study_dir, folders, shared);  // here, on the helper thread
    return [errors = std::move(errors)] {
      for (const auto& e : errors)
        log_line(e);
    };
  });
}

}  // namespace slurmtune::runtime
