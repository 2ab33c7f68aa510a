#include "runtime/coordinator/checkpoint_path.hpp"

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

}  // namespace slurmtune::runtime
