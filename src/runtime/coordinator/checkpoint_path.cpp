#include "runtime/coordinator/checkpoint_path.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <optional>
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

// Whether `path` exists (nullopt: it is a link, or cannot be examined).
std::optional<bool> exists_not_link(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0)
    return S_ISLNK(info.st_mode) ? std::nullopt : std::optional(true);
  return errno == ENOENT ? std::optional(false) : std::nullopt;
}

// `rest`, a relative path below `base` (a trial's folder as resolved when it was made),
// resolved as weakly_canonical would: one lstat a component while they exist (the
// folder's own too: a trial that swapped it for a link is resolved whole, and refused),
// the rest as named. nullopt where a component is "..", a link, or cannot be examined:
// the caller resolves the whole path then.
std::optional<fs::path> resolved_below(const fs::path& base, const fs::path& rest) {
  fs::path out = base;
  std::optional<bool> exists = exists_not_link(out);
  for (const fs::path& part : rest) {
    if (!exists) return std::nullopt;
    if (part.empty() || part == ".") continue;
    if (part == "..") return std::nullopt;
    out /= part;
    if (*exists) exists = exists_not_link(out);  // nothing exists below what does not
  }
  if (!exists) return std::nullopt;
  return out;
}

// What `named` names below `dir`, compared component by component (neither resolved);
// nullopt when it does not start with `dir`.
std::optional<fs::path> below(const fs::path& named, const fs::path& dir) {
  auto part = named.begin();
  for (const fs::path& component : dir) {
    if (part == named.end() || *part != component) return std::nullopt;
    ++part;
  }
  fs::path rest;
  for (; part != named.end(); ++part)
    rest /= *part;
  return rest;
}

}  // namespace

CheckpointPath CheckpointConfinement::confine(const std::string& named, const fs::path& trial_dir,
                                              const fs::path& checkpoint_dir) {
  const fs::path given(named);
  const fs::path own = folder(trial_dir);
  const fs::path elsewhere = checkpoint_dir == trial_dir ? own : folder(checkpoint_dir);
  std::optional<fs::path> walked;
  if (!given.is_absolute())
    walked = resolved_below(own, given);
  else if (const auto in_checkpoints = below(given, checkpoint_dir))
    walked = resolved_below(elsewhere, *in_checkpoints);
  else if (const auto in_own = below(given, trial_dir))
    walked = resolved_below(own, *in_own);
  fs::path path = walked ? std::move(*walked) : resolved(given.is_absolute() ? given : own / given);
  if (path.filename().empty()) path = path.parent_path();  // "ckpt/" names the folder ckpt
  if (!path_strictly_within(path, own) && !path_strictly_within(path, elsewhere))
    throw protocol::ProtocolError(
        "CHECKPOINT: '" + named + "' resolves to " + path.string() +
        ", which is not inside the trial's own folder " + own.string() +
        (elsewhere == own ? std::string() : " nor its checkpoint folder " + elsewhere.string()));
  for (const fs::path& inside : {own, elsewhere})
    if (path_within(path, inside / "pbt-kept"))
      throw protocol::ProtocolError("CHECKPOINT: '" + named + "' is inside " +
                                    (inside / "pbt-kept").string() +
                                    ", where slurmtune keeps copies of checkpoints");
  if (study_resolved_.empty()) study_resolved_ = resolved(study_dir_);
  return CheckpointPath{path, recorded_path(path, study_resolved_)};
}

fs::path CheckpointConfinement::folder(const fs::path& dir) {
  if (!dir.has_filename()) return resolved(dir);
  const std::string parent = dir.parent_path().string();
  auto it = parents_.find(parent);
  if (it == parents_.end()) it = parents_.emplace(parent, resolved(parent)).first;
  return it->second / dir.filename();
}

}  // namespace slurmtune::runtime
