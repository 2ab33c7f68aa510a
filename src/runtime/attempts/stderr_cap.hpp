#pragma once
// A bound on a trial's stderr.log (issue #41, item 18): a trial writing without pause
// filled 1 GiB. The trial's process appends to the file (O_APPEND, ChildProcess), so the
// file can be emptied under it: past the cap its last part is kept beside it, in
// stderr.log.1, and the trial's next lines land at the start of an empty stderr.log.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/trial_id.hpp"
#include "runtime/control/background_work.hpp"

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
/// turn, on the helper thread: each call looks at `budget` of them, going on where the
/// last call stopped (with N attempts running, each file is looked at every
/// ceil(N / budget) calls), and a call while the last one's files are still being looked
/// at does nothing. On the loop, 512 `stat`s a second took half of it with a parallel
/// file system's millisecond of metadata latency (issue #62). Each file capped is logged
/// once, and its attempt (the same launch still) reads its stderr tail from the new start.
class StderrCaps {
 public:
  static constexpr std::size_t kFilesPerCheck = 512;

  explicit StderrCaps(std::uintmax_t cap = kStderrCapBytes, std::uintmax_t kept = kStderrKeptBytes)
      : cap_(cap), kept_(kept) {}
  void check(TrialTable& trials, BackgroundWork& off_loop, std::size_t budget = kFilesPerCheck);

 private:
  std::uintmax_t cap_, kept_;
  core::TrialId next_trial_ = 0;  // the first trial id the next call looks at
  bool looking_ = false;          // a call's files are being looked at
};

}  // namespace slurmtune::runtime
