#pragma once
// A thin RAII layer over the HDF5 C API. Every hid_t has exactly one owner (`Hid`),
// whose destructor releases it and never throws (a failed release is logged). Every C
// call that can fail goes through check(), which turns HDF5's error stack into the
// exception text, so a failure reads "HDF5: H5Dwrite: ... (file, dataset)" rather than
// a bare -1.
#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace slurmtune::store {

/// An HDF5 call failed; what() carries the library's error stack.
class Hdf5Error : public Error {
 public:
  using Error::Error;
};

/// Owner of one HDF5 identifier of any kind (file, group, dataset, dataspace,
/// datatype, property list, attribute).
class Hid {
 public:
  Hid() = default;
  explicit Hid(hid_t id) : id_(id) {}
  Hid(Hid&& other) noexcept : id_(other.release()) {}
  Hid& operator=(Hid&& other) noexcept;
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  ~Hid() { reset(); }

  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }  // NOLINT: pass straight to C calls
  bool valid() const { return id_ >= 0; }
  hid_t release() noexcept;
  void reset() noexcept;

 private:
  hid_t id_ = H5I_INVALID_HID;
};

/// Silences HDF5's automatic error printing for this process; errors are collected
/// from the stack instead. Idempotent.
void quiet_hdf5_errors();

/// Returns `id` owned, or throws Hdf5Error naming `what` with the error stack.
Hid check(hid_t id, std::string_view what);
/// Throws Hdf5Error naming `what` when `status` < 0.
void check_status(herr_t status, std::string_view what);
/// The current error stack as one line ("H5Dopen2(): unable to open ...; ...").
std::string error_stack_text();
/// When `stack` (error_stack_text of a failed create or open of `path`) says HDF5 could
/// not take its file lock: the error to give, naming the cause and the way out; empty
/// otherwise. Either the file system refused flock(), as some Lustre, GPFS and DVS
/// mounts do (errno 38 or 524, HDFGroup/hdf5#3311), or another process held the lock
/// through `waited_s` seconds of LockWait (lock_held_elsewhere).
std::string file_lock_refusal(const std::string& path, const std::string& stack,
                              double waited_s = 0);
/// Whether `stack` says another process holds HDF5's lock on the file: flock() found it
/// taken (EWOULDBLOCK). A reader holds it while it opens the file (h5py, `slurmtune
/// status`, the dashboard) and a program that opened it without SWMR for as long as it
/// has it open; a writer until it starts SWMR mode.
bool lock_held_elsewhere(const std::string& stack);
/// Returns the file `id` owned, or throws Hdf5Error naming `what` with the error stack,
/// or the file_lock_refusal of `path` when that is why (open_file without a wait).
Hid check_file(hid_t id, std::string_view what, const std::string& path);

/// How long an open of a results file waits for another process's lock on it. A reader
/// that polls the file (`status --watch`, the dashboard, a user's h5py loop) holds it a
/// few milliseconds per open, and a study resumed at that moment -- a requeued job --
/// failed at once with "unable to lock file, errno = 11".
inline constexpr double kFileLockWaitS = 30;

/// The retries of one open while another process holds the file's lock: again() says
/// whether to try once more after a failed open, and sleeps first (10 ms, doubling to
/// half a second), until `wait_s` seconds have passed. Any other failure ends it at once.
class LockWait {
 public:
  explicit LockWait(double wait_s = kFileLockWaitS);
  /// `stack`: the failed open's error_stack_text.
  bool again(const std::string& stack);
  double wait_s() const { return wait_s_; }

 private:
  double wait_s_;
  double slept_s_ = 0;
  double pause_s_ = 0.01;
};

/// `open` (an H5Fopen) until it returns a file, waiting out another process's lock as
/// LockWait does; then throws the file_lock_refusal of `path` when the lock is why, else
/// Hdf5Error naming `what` with the error stack.
template <typename Open>
Hid open_file(Open&& open, std::string_view what, const std::string& path,
              double wait_s = kFileLockWaitS) {
  LockWait lock_wait(wait_s);
  while (true) {
    const hid_t id = open();
    if (id >= 0) return Hid(id);
    const std::string stack = error_stack_text();
    if (lock_wait.again(stack)) continue;
    const std::string refusal = file_lock_refusal(path, stack, lock_wait.wait_s());
    if (!refusal.empty()) throw Hdf5Error(refusal);
    throw Hdf5Error("HDF5: " + std::string(what) + " failed: " + stack);
  }
}

// ---- attributes -------------------------------------------------------------
void write_string_attribute(hid_t object, const std::string& name, const std::string& value);
void write_int_attribute(hid_t object, const std::string& name, std::int64_t value);
void write_double_attribute(hid_t object, const std::string& name, double value);
void write_strings_attribute(hid_t object, const std::string& name,
                             const std::vector<std::string>& values);
std::optional<std::string> read_string_attribute(hid_t object, const std::string& name);
std::optional<std::int64_t> read_int_attribute(hid_t object, const std::string& name);
std::vector<std::string> read_strings_attribute(hid_t object, const std::string& name);

// ---- flushes ----------------------------------------------------------------
/// Whether a table's write flushes the dataset (a reader sees the rows once it did), or
/// leaves that to a later flush_dataset: a group commit of several logged batches writes
/// them all and flushes each table once, so a compressed partial chunk is deflated once.
enum class Flush { Now, Later };
/// H5Dflush of `dataset`, naming `what` if it fails.
void flush_dataset(hid_t dataset, const char* what);

// ---- types ------------------------------------------------------------------
/// Fixed-length, null-padded UTF-8 string type of `size` bytes.
Hid fixed_string_type(std::size_t size);
/// Enumeration over uint8 with the given member names (values 0, 1, ...).
Hid enum_type(const std::vector<std::string>& names);

}  // namespace slurmtune::store
