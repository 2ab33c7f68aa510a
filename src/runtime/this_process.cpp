#include "runtime/this_process.hpp"

#include <unistd.h>

#include <system_error>

namespace slurmtune::runtime {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

std::filesystem::path executable_path() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe;
}

std::string self_program() {
  const std::filesystem::path exe = executable_path();
  return exe.empty() ? std::string("slurmtune") : exe.string();
}

}  // namespace slurmtune::runtime
