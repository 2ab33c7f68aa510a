#include "runtime/this_process.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <system_error>
#include <vector>

namespace slurmtune::runtime {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

std::string raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return "";
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  const auto text = [](rlim_t n) {
    return n == RLIM_INFINITY ? std::string("unlimited") : std::to_string(n);
  };
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
    return "descriptors: could not raise the soft limit of " + text(before) + " to the hard " +
           text(limit.rlim_max);
  return "descriptors: soft limit raised from " + text(before) + " to the hard limit, " +
         text(limit.rlim_max);
}

bool DescriptorHeadroom::spare(int count) {
  if (!probe_) probe_ = protocol::UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!probe_) return false;
  std::vector<protocol::UniqueFd> held;
  held.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    held.emplace_back(::fcntl(probe_.get(), F_DUPFD_CLOEXEC, 0));
    if (!held.back()) return false;
  }
  return true;
}

std::string node_temporary_folder() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
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

std::string bundled_python_dir() {
  const std::filesystem::path exe = executable_path();
  if (exe.empty()) return {};
  const auto dir = exe.parent_path().parent_path() / "share" / "slurmtune" / "python";
  std::error_code ec;
  return std::filesystem::exists(dir / "slurmtune" / "client.py", ec) ? dir.string()
                                                                      : std::string();
}

std::string python_path_with_bundled() {
  const std::string dir = bundled_python_dir();
  const char* current = std::getenv("PYTHONPATH");
  if (dir.empty()) return current ? current : "";
  return current && *current ? dir + ":" + current : dir;
}

}  // namespace slurmtune::runtime
