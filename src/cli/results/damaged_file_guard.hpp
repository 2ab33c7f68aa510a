#pragma once
// HDF5 1.10 itself can crash (an out-of-bounds copy from a damaged global heap) or loop
// forever on some damaged files; h5py does the same on them. The commands that read a
// results file turn both into the error every other kind of damage gets.
#include <string>

namespace slurmtune::cli {

/// While a guard lives, SIGSEGV, SIGBUS or SIGFPE ends the command with
/// "slurmtune: error: PATH: corrupted: ..." and exit status 1 instead of a core dump.
/// Until opened() is called, so does reading for longer than open_timeout_s() (the
/// header of a healthy file reads in milliseconds). One guard at a time.
class DamagedFileGuard {
 public:
  explicit DamagedFileGuard(const std::string& path);
  ~DamagedFileGuard();
  DamagedFileGuard(const DamagedFileGuard&) = delete;
  DamagedFileGuard& operator=(const DamagedFileGuard&) = delete;
  /// The header is read: no more deadline (reading the tables may take long).
  void opened();
};

/// Seconds allowed for opening a results file: SLURMTUNE_OPEN_TIMEOUT_S, default 20.
unsigned open_timeout_s();

}  // namespace slurmtune::cli
