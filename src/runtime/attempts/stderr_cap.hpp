#pragma once
// A bound on a trial's stderr.log (issue #41, item 18): a trial writing without pause
// filled 1 GiB. The trial's process appends to the file (O_APPEND, ChildProcess), so the
// file can be emptied under it: past the cap its last part is kept beside it, in
// stderr.log.1, and the trial's next lines land at the start of an empty stderr.log.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/trial_id.hpp"

namespace slurmtune::runtime {

inline constexpr std::uintmax_t kStderrCapBytes = std::uintmax_t{64} << 20;  // 64 MiB
inline constexpr std::uintmax_t kStderrKeptBytes = std::uintmax_t{1} << 20;  // 1 MiB

/// When `path` holds more than `cap` bytes: its last `kept` bytes go to PATH.1 (replacing
/// an earlier one) and `path` is emptied; returns true then. False when it is smaller or
/// absent; an I/O error is thrown as std::runtime_error with the path.
bool cap_stderr_log(const std::string& path, std::uintmax_t cap = kStderrCapBytes,
                    std::uintmax_t kept = kStderrKeptBytes);

class TrialTable;

/// cap_stderr_log for the running attempts' stderr files, a bounded number a call in
/// turn: a `stat` of 16,384 files a second on a parallel file system would stall the
/// coordinator's loop (issue #62), so each call looks at `budget` of them, going on
/// where the last call stopped. With N attempts running, each file is looked at every
/// ceil(N / budget) calls. Each one capped is logged once, and its attempt reads its
/// stderr tail from the new start.
class StderrCaps {
 public:
  static constexpr std::size_t kFilesPerCheck = 512;

  explicit StderrCaps(std::uintmax_t cap = kStderrCapBytes, std::uintmax_t kept = kStderrKeptBytes)
      : cap_(cap), kept_(kept) {}
  void check(TrialTable& trials, std::size_t budget = kFilesPerCheck);

 private:
  std::uintmax_t cap_, kept_;
  core::TrialId next_trial_ = 0;  // the first trial id the next call looks at
};

}  // namespace slurmtune::runtime
