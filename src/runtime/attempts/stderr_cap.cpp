#include "runtime/attempts/stderr_cap.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
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

void StderrCaps::check(TrialTable& trials, BackgroundWork& off_loop, std::size_t budget) {
  if (looking_) return;
  struct Look {
    core::TrialId trial;
    std::uint64_t launch;
    std::string path;
    bool capped = false;
    std::string error;
  };
  std::vector<Look> looks;
  budget = std::min(budget, trials.size());
  auto it = trials.from(next_trial_);
  for (std::size_t looked = 0; looked < budget; ++looked, ++it) {
    if (it == trials.end()) it = trials.begin();
    const ActiveTrial& t = *it->second;
    if (!t.stderr_path.empty()) looks.push_back({t.trial, t.launch, t.stderr_path, false, {}});
  }
  next_trial_ = it == trials.end() ? 0 : it->first;
  if (looks.empty()) return;
  looking_ = true;
  // The task touches only the files and its copies; the finish, on the loop, the rest.
  off_loop.post([this, &trials, looks = std::move(looks), cap = cap_,
                 kept = kept_]() mutable -> BackgroundWork::Finish {
    for (Look& look : looks) {
      try {
        look.capped = cap_stderr_log(look.path, cap, kept);
      } catch (const std::exception& e) {
        look.error = e.what();
      }
    }
    return [this, &trials, looks = std::move(looks)] {
      looking_ = false;
      for (const Look& look : looks) {
        ActiveTrial* t = trials.find(look.trial);
        if (!look.error.empty())
          log_line("trial " + std::to_string(look.trial) + ": " + look.error);
        if (!look.capped) continue;
        log_line("trial " + std::to_string(look.trial) + ": " + look.path + " passed " +
                 size_text(cap_) + ": its last " + size_text(kept_) + " kept in " + look.path +
                 ".1, the file emptied; the trial writes on");
        if (t && t->launch == look.launch) t->stderr_offset = 0;
      }
    };
  });
}

}  // namespace slurmtune::runtime
