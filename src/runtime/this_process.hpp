#pragma once
// Facts about the running slurmtune process that several parts of `slurmtune run` need.
#include <filesystem>
#include <string>

namespace slurmtune::runtime {

/// This host's name ("localhost" when it cannot be read).
std::string host_name();
/// This executable's path (/proc/self/exe), or empty when it cannot be read.
std::filesystem::path executable_path();
/// argv[0] that runs this slurmtune again (rank-exec, worker steps): its path, or
/// "slurmtune" (looked up on PATH) when the path cannot be read.
std::string self_program();

}  // namespace slurmtune::runtime
