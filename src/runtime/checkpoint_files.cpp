#include "runtime/checkpoint_files.hpp"

#include <fstream>
#include <system_error>

#include "core/error.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;

std::string claim_checkpoint_folder(const std::string& folder, const fs::path& study_file_dir,
                                    const std::string& results_file) {
  const fs::path written(folder);
  const fs::path path =
      (written.is_absolute() ? written : fs::absolute(study_file_dir) / written).lexically_normal();
  const auto refuse = [&](const std::string& why) {
    return InputError("[checkpoints] folder = \"" + folder + "\": " + why);
  };
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    fs::create_directories(path, ec);
    if (ec) throw refuse("cannot make " + path.string() + ": " + ec.message());
    fs::permissions(path, fs::perms::owner_all, ec);
  }
  if (!fs::is_directory(path, ec)) throw refuse(path.string() + " is not a folder");
  const std::string owner = fs::weakly_canonical(fs::absolute(results_file)).string();
  const fs::path marker = path / ".slurmtune-study";
  if (std::ifstream in{marker}) {
    std::string claimed;
    std::getline(in, claimed);
    if (claimed != owner)
      throw refuse(path.string() + " holds the checkpoints of the study " + claimed +
                   " (its file .slurmtune-study says so); give each study a folder of its own");
    return fs::weakly_canonical(path).string();
  }
  std::ofstream out{marker};
  out << owner << "\n";
  if (!out.flush()) throw refuse("cannot write " + marker.string());
  return fs::weakly_canonical(path).string();
}

std::string remove_checkpoint_files(const fs::path& study_dir, const TrialFolders& folders,
                                    core::TrialId trial, const std::string& relative) {
  std::error_code ec;
  const fs::path own = fs::weakly_canonical(folders.trial(trial), ec);
  if (ec) return "cannot resolve the trial's folder: " + ec.message();
  const fs::path elsewhere = fs::weakly_canonical(folders.checkpoints(trial), ec);
  if (ec) return "cannot resolve the trial's checkpoint folder: " + ec.message();
  const fs::path named = (study_dir / relative).lexically_normal();
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

std::vector<std::string> remove_checkpoints(
    const fs::path& study_dir, const TrialFolders& folders,
    const std::vector<std::pair<core::TrialId, std::string>>& removals) {
  std::vector<std::string> errors;
  for (const auto& [trial, path] : removals)
    if (auto error = remove_checkpoint_files(study_dir, folders, trial, path); !error.empty())
      errors.push_back("trial " + std::to_string(trial) + ": checkpoint " + path +
                       " not removed: " + error);
  return errors;
}

}  // namespace slurmtune::runtime
