#include "runtime/coordinator/checkpoint_path.hpp"

#include <fstream>
#include <string>
#include <system_error>

#include "core/error.hpp"
#include "protocol/wire/protocol.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;
namespace {

// `path` resolved as far as it exists (a checkpoint may be named before it is written).
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(path, ec);
  if (ec)
    throw protocol::ProtocolError("CHECKPOINT: cannot resolve '" + path.string() +
                                  "': " + ec.message());
  return out;
}

}  // namespace

CheckpointPath confine_checkpoint(const std::string& named, const fs::path& trial_dir,
                                  const fs::path& checkpoint_dir, const fs::path& study_dir) {
  const fs::path given(named);
  const fs::path own = resolved(trial_dir);
  const fs::path elsewhere = resolved(checkpoint_dir);
  fs::path path = resolved(given.is_absolute() ? given : trial_dir / given);
  if (path.filename().empty()) path = path.parent_path();  // "ckpt/" names the folder ckpt
  if (!path_strictly_within(path, own) && !path_strictly_within(path, elsewhere))
    throw protocol::ProtocolError(
        "CHECKPOINT: '" + named + "' resolves to " + path.string() +
        ", which is not inside the trial's own folder " + own.string() +
        (elsewhere == own ? std::string() : " nor its checkpoint folder " + elsewhere.string()));
  for (const fs::path& folder : {own, elsewhere})
    if (path_within(path, folder / "pbt-kept"))
      throw protocol::ProtocolError("CHECKPOINT: '" + named + "' is inside " +
                                    (folder / "pbt-kept").string() +
                                    ", where slurmtune keeps copies of checkpoints");
  return CheckpointPath{path, recorded_path(path, resolved(study_dir))};
}

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

}  // namespace slurmtune::runtime
