#include "runtime/attempts/stderr_cap.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "runtime/attempts/trial_table.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {

bool cap_stderr_log(const std::string& path, std::uintmax_t cap, std::uintmax_t kept) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size <= cap) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read it to cap it");
  const std::uintmax_t from = size > kept ? size - kept : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::vector<char> tail(static_cast<std::size_t>(size - from));
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  tail.resize(static_cast<std::size_t>(in.gcount()));
  {
    std::ofstream out(path + ".1", std::ios::binary | std::ios::trunc);
    out.write(tail.data(), static_cast<std::streamsize>(tail.size()));
    if (!out) throw std::runtime_error(path + ".1: cannot write the end of " + path);
  }
  std::filesystem::resize_file(path, 0, error);
  if (error) throw std::runtime_error(path + ": cannot empty it: " + error.message());
  return true;
}

void cap_stderr_logs(TrialTable& trials) {
  for (auto& [id, t] : trials) {
    if (t->stderr_path.empty()) continue;
    try {
      if (!cap_stderr_log(t->stderr_path)) continue;
      t->stderr_offset = 0;
      log_line("trial " + std::to_string(id) + ": " + t->stderr_path + " passed " +
               std::to_string(kStderrCapBytes >> 20) + " MiB: its last " +
               std::to_string(kStderrKeptBytes >> 20) + " MiB kept in " + t->stderr_path +
               ".1, the file emptied; the trial writes on");
    } catch (const std::exception& e) {
      log_line("trial " + std::to_string(id) + ": " + e.what());
    }
  }
}

}  // namespace slurmtune::runtime
