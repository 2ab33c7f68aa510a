#pragma once
// Facts about the running slurmtune process that several parts of `slurmtune run` need.
#include <filesystem>
#include <string>

namespace slurmtune::runtime {

/// This host's name ("localhost" when it cannot be read).
std::string host_name();
/// This executable's path (/proc/self/exe), or empty when it cannot be read.
std::filesystem::path executable_path();

}  // namespace slurmtune::runtime
