#pragma once
// Facts about the running slurmtune process that several parts of `slurmtune run` need.
#include <filesystem>
#include <string>

#include "protocol/wire/unique_fd.hpp"

namespace slurmtune::runtime {

/// This host's name ("localhost" when it cannot be read).
std::string host_name();
/// Where this process keeps files of its own on its node: $TMPDIR when set, else /tmp.
std::string node_temporary_folder();
/// This executable's path (/proc/self/exe), or empty when it cannot be read.
std::filesystem::path executable_path();
/// argv[0] that runs this slurmtune again (rank-exec, worker steps): its path, or
/// "slurmtune" (looked up on PATH) when the path cannot be read.
std::string self_program();
/// slurmtune's Python package next to this executable (bin/../share/slurmtune/python, in
/// an install tree and, by the same shape, a build tree), or empty when it is not there.
std::string bundled_python_dir();
/// Raises this process's soft RLIMIT_NOFILE to its hard limit (a login shell's 1,024
/// travels into the job, and every connection and open file needs a descriptor; the
/// children inherit the raised limit). Returns the limit before and after; "" when
/// nothing changed, else a line for the log.
std::string raise_descriptor_limit();
/// Whether this process can open `count` more descriptors now (tried, then closed): a
/// launch needs a few (its credential file, its process's pipes), and one that finds none
/// would fail its trial, where one that waits a turn does not. The probes are duplicates
/// of one descriptor it keeps: a launch asks before each trial, and opening a file per
/// probe (a path looked up each time) took 9 % of the loop's time at 2,048 nodes.
class DescriptorHeadroom {
 public:
  bool spare(int count);

 private:
  protocol::UniqueFd probe_;
};
/// PYTHONPATH with that package first, so `from slurmtune import client` works in trials
/// (and `python3 -m slurmtune.report_html` for `slurmtune html`) without any setup.
std::string python_path_with_bundled();

}  // namespace slurmtune::runtime
