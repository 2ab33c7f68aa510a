#include "runtime/pbt/pbt_checkpoints.hpp"

#include <system_error>
#include <utility>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "runtime/pbt/file_copy.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;
namespace {

constexpr const char* kClonePrefix = "pbt-from-trial-";

// Copies `source` (a file or a folder) into the fresh folder `dir`, keeping its name,
// then removes the other entries of `parent` whose names start with `prefix`. The copy
// is made in DIR.partial and renamed into place, so `dir` is there whole or not at all
// (a crash midway leaves a .partial that the next copy removes), and the new copy is
// complete before an old one goes. `unchanged`: the source must not change meanwhile.
TreeCopy replace_copy(const fs::path& source, const fs::path& dir, const fs::path& parent,
                      const std::string& prefix, bool unchanged) {
  std::error_code ec;
  const fs::path staging = dir.string() + ".partial";
  const fs::path target = dir / source.filename();
  fs::remove_all(staging, ec);
  fs::remove_all(dir, ec);
  fs::create_directories(staging, ec);
  if (ec) throw Error("pbt: cannot create " + staging.string() + ": " + ec.message());
  TreeCopy copy;
  try {
    const TreeStamp before = unchanged ? stamp_tree(source) : TreeStamp{};
    copy = copy_tree(source, staging / source.filename());
    if (unchanged && stamp_tree(source) != before)
      throw Error(
          "the trial wrote it while it was being copied (a trial should not "
          "change a checkpoint it reported until its next decision)");
    fs::rename(staging, dir, ec);
    if (ec) throw Error("cannot rename " + staging.string() + ": " + ec.message());
  } catch (const Error& e) {
    fs::remove_all(staging, ec);
    throw Error("pbt: cannot copy checkpoint " + source.string() + " to " + target.string() + ": " +
                e.what());
  }
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && entry.path() != dir) fs::remove_all(entry.path(), ec);
  }
  return copy;
}

}  // namespace

PbtCheckpoints::PbtCheckpoints(fs::path study_dir, TrialFolders folders)
    : study_dir_(std::move(study_dir)), folders_(std::move(folders)) {}

fs::path PbtCheckpoints::checkpoint_dir(core::TrialId trial) const {
  return folders_.checkpoints(trial);
}

fs::path PbtCheckpoints::kept_dir(core::TrialId trial, double step) const {
  return checkpoint_dir(trial) / "pbt-kept" / ("step-" + core::format_double(step));
}

TreeCopy PbtCheckpoints::keep(core::TrialId trial, double step, const fs::path& source) const {
  const fs::path dir = kept_dir(trial, step);
  return replace_copy(source, dir, dir.parent_path(), "step-", true);
}

std::optional<TreeCopy> PbtCheckpoints::keep_if_missing(core::TrialId trial, double step,
                                                        const fs::path& source) const {
  std::error_code ec;
  if (!fs::is_empty(kept_dir(trial, step), ec) && !ec) return std::nullopt;
  return keep(trial, step, source);
}

PbtCheckpoints::Copy PbtCheckpoints::clone(core::TrialId trial, const core::Exploit& e) const {
  return clone_from(kept_dir(e.donor, e.donor_step), trial, e);
}

fs::path PbtCheckpoints::clone_dir(core::TrialId trial, const core::Exploit& e) const {
  return checkpoint_dir(trial) / (std::string(kClonePrefix) + std::to_string(e.donor) + "-step-" +
                                  core::format_double(e.donor_step));
}

PbtCheckpoints::Copy PbtCheckpoints::clone_from(const fs::path& kept, core::TrialId trial,
                                                const core::Exploit& e) const {
  std::error_code ec;
  fs::directory_iterator entries(kept, ec);
  if (ec || entries == fs::directory_iterator())
    throw Error("pbt: trial " + std::to_string(e.donor) + " has no kept checkpoint at step " +
                core::format_double(e.donor_step) + " (" + kept.string() + ")");
  const fs::path source = entries->path();
  const fs::path dir = clone_dir(trial, e);
  const TreeCopy copy = replace_copy(source, dir, checkpoint_dir(trial), kClonePrefix, false);
  const fs::path made = dir / source.filename();
  return {recorded_path(made, study_dir_), made, copy};
}

}  // namespace slurmtune::runtime
