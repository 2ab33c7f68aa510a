#include "runtime/attempts/stderr_cap.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "runtime/attempts/trial_table.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {
namespace {

std::string size_text(std::uintmax_t bytes) {
  if (bytes >= (1U << 20) && bytes % (1U << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

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

void StderrCaps::check(TrialTable& trials, std::size_t budget) {
  budget = std::min(budget, trials.size());
  auto it = trials.from(next_trial_);
  for (std::size_t looked = 0; looked < budget; ++looked, ++it) {
    if (it == trials.end()) it = trials.begin();
    ActiveTrial& t = *it->second;
    if (t.stderr_path.empty()) continue;
    try {
      if (!cap_stderr_log(t.stderr_path, cap_, kept_)) continue;
      t.stderr_offset = 0;
      log_line("trial " + std::to_string(t.trial) + ": " + t.stderr_path + " passed " +
               size_text(cap_) + ": its last " + size_text(kept_) + " kept in " + t.stderr_path +
               ".1, the file emptied; the trial writes on");
    } catch (const std::exception& e) {
      log_line("trial " + std::to_string(t.trial) + ": " + e.what());
    }
  }
  next_trial_ = it == trials.end() ? 0 : it->first;
}

}  // namespace slurmtune::runtime
