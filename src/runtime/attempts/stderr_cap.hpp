#pragma once
// A bound on a trial's stderr.log (issue #41, item 18): a trial writing without pause
// filled 1 GiB. The trial's process appends to the file (O_APPEND, ChildProcess), so the
// file can be emptied under it: past the cap its last part is kept beside it, in
// stderr.log.1, and the trial's next lines land at the start of an empty stderr.log.
#include <cstdint>
#include <string>

namespace slurmtune::runtime {

inline constexpr std::uintmax_t kStderrCapBytes = std::uintmax_t{64} << 20;  // 64 MiB
inline constexpr std::uintmax_t kStderrKeptBytes = std::uintmax_t{1} << 20;  // 1 MiB

/// When `path` holds more than `cap` bytes: its last `kept` bytes go to PATH.1 (replacing
/// an earlier one) and `path` is emptied; returns true then. False when it is smaller or
/// absent; an I/O error is thrown as std::runtime_error with the path.
bool cap_stderr_log(const std::string& path, std::uintmax_t cap = kStderrCapBytes,
                    std::uintmax_t kept = kStderrKeptBytes);

class TrialTable;

/// cap_stderr_log for every running attempt's stderr file; each one capped is logged
/// once, and its attempts read their stderr tail from the new start.
void cap_stderr_logs(TrialTable& trials);

}  // namespace slurmtune::runtime
