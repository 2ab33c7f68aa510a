#include "runtime/pbt/pbt_checkpoints.hpp"

#include <system_error>
#include <utility>

#include "core/error.hpp"
#include "core/number_text.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;
namespace {

// Copies `source` (a file or a folder) into the fresh folder `dir`, keeping its name,
// then removes the other entries of `parent` whose names start with `prefix`. The new
// copy is complete before an old one goes.
fs::path replace_copy(const fs::path& source, const fs::path& dir, const fs::path& parent,
                      const std::string& prefix) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  fs::path target = dir / source.filename();
  // Links are copied as links, never followed: a link in a checkpoint that points at
  // the study's folder would otherwise copy the study into the trial.
  if (!ec)
    fs::copy(source, target, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
  if (ec)
    throw Error("pbt: cannot copy checkpoint " + source.string() + " to " + target.string() + ": " +
                ec.message());
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && entry.path() != dir) fs::remove_all(entry.path(), ec);
  }
  return target;
}

std::uint64_t size_of(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return fs::file_size(path, ec);
  std::uint64_t bytes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(path, ec))
    if (entry.is_regular_file(ec)) bytes += entry.file_size(ec);
  return bytes;
}

}  // namespace

PbtCheckpoints::PbtCheckpoints(fs::path study_dir, fs::path trials_dir)
    : study_dir_(std::move(study_dir)), trials_dir_(std::move(trials_dir)) {}

fs::path PbtCheckpoints::trial_dir(core::TrialId trial) const {
  return trials_dir_ / ("trial-" + std::to_string(trial));
}

fs::path PbtCheckpoints::kept_dir(core::TrialId trial, double step) const {
  return trial_dir(trial) / "pbt-kept" / ("step-" + core::format_double(step));
}

void PbtCheckpoints::keep(core::TrialId trial, double step, const fs::path& source) const {
  const fs::path dir = kept_dir(trial, step);
  replace_copy(source, dir, dir.parent_path(), "step-");
}

PbtCheckpoints::Copy PbtCheckpoints::clone(core::TrialId trial, const core::Exploit& e) const {
  const fs::path kept = kept_dir(e.donor, e.donor_step);
  std::error_code ec;
  fs::directory_iterator entries(kept, ec);
  if (ec || entries == fs::directory_iterator())
    throw Error("pbt: trial " + std::to_string(e.donor) + " has no kept checkpoint at step " +
                core::format_double(e.donor_step) + " (" + kept.string() + ")");
  const fs::path source = entries->path();
  const std::string prefix = "pbt-from-trial-";
  const fs::path dir = trial_dir(trial) / (prefix + std::to_string(e.donor) + "-step-" +
                                           core::format_double(e.donor_step));
  const fs::path target = replace_copy(source, dir, trial_dir(trial), prefix);
  return Copy{target.lexically_relative(study_dir_).string(), size_of(target)};
}

}  // namespace slurmtune::runtime
