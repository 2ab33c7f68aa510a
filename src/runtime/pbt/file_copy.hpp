#pragma once
// Copies of checkpoints that cost what the file system makes them cost (issue #62): a
// reflink where the file system shares blocks (XFS, Btrfs, bcachefs, ZFS 2.2: no data
// moves, whatever the size), else the kernel's copy_file_range (a server-side copy on
// NFS 4.2 and some parallel file systems; in-kernel elsewhere), else read and write.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace slurmtune::runtime {

/// How each file of a tree was copied, and the bytes copied.
struct TreeCopy {
  std::uint64_t bytes = 0;
  std::uint64_t reflinked = 0, kernel_copied = 0, read_written = 0;  // files
  double seconds = 0;

  /// "2.0 GB in 1.8 s, copied in the kernel", for the log.
  std::string describe() const;
};

/// Copies `source` (a file or a folder) to `target`, which must not exist. Links are
/// copied as links, never followed: a link in a checkpoint that points at the study's
/// folder would otherwise copy the study. Files keep their permission bits. Throws Error
/// naming the path that failed; anything but files, folders and links is refused.
TreeCopy copy_tree(const std::filesystem::path& source, const std::filesystem::path& target);

/// Each file's size and modification time under `root` (a file or a folder), to tell
/// whether a trial wrote its checkpoint while it was being copied.
using TreeStamp = std::map<std::string, std::pair<std::uint64_t, std::int64_t>>;
TreeStamp stamp_tree(const std::filesystem::path& root);

}  // namespace slurmtune::runtime
