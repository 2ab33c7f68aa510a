#pragma once
// One writer per study: `slurmtune run` holds STUDY.lock (next to STUDY.h5) from before
// it touches anything of the study until it exits. A second run is refused with the
// holder's pid and host, and nothing of the first is changed (its secret, credentials,
// trial folders, results file).
//
// The lock is a file created with O_CREAT | O_EXCL, not flock(): some Lustre, GPFS and
// DVS mounts refuse flock (HDFGroup/hdf5#3311), while an exclusive create is atomic on
// every POSIX and NFSv3+ file system. Its lines say who holds it (host, pid, the pid's
// start time, the Slurm job and its restart count), so a lock whose holder is gone is
// recognised and replaced with a line that says why:
//   - same host: the pid no longer runs, or runs another program (a start time that
//     differs: the pid was reused);
//   - the same Slurm job with another restart count: an earlier run of a requeued job,
//     whose processes Slurm has ended.
//   - another host's holder whose Slurm job the queue no longer lists (a node that failed
//     or a run killed outright, the job since ended), when the caller can ask the queue.
// A holder this process cannot check (another host, no queue to ask) is never broken:
// the refusal names the file to remove once that job is known to have ended.
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace slurmtune::runtime {

/// Who holds a lock, as its file says.
struct LockHolder {
  std::string host;
  long pid = 0;
  std::string started;  ///< the pid's start time in clock ticks after boot (/proc/PID/stat)
  std::string job;      ///< SLURM_JOB_ID, empty outside Slurm
  std::string restart;  ///< SLURM_RESTART_COUNT, empty when unset
  std::string since;    ///< when it was taken (UTC, ISO 8601)
};

/// For a holder on another host with a Slurm job: why that job cannot be running any more
/// (asked of the queue), or empty when it may be, or when the queue cannot tell.
using JobEnded = std::function<std::string(const LockHolder& holder)>;

class StudyLock {
 public:
  /// Takes `path` or throws InputError naming the live holder; `note` receives a line
  /// about a stale lock it replaced; `job_ended` (may be empty) asks the queue about a
  /// holder on another host.
  StudyLock(std::string path, void (*note)(std::string_view), const JobEnded& job_ended = {});
  ~StudyLock();
  StudyLock(const StudyLock&) = delete;
  StudyLock& operator=(const StudyLock&) = delete;

  /// This process as a lock's holder.
  static LockHolder this_process();
  /// Why `holder` cannot be running any more, or empty when it may be.
  static std::string why_stale(const LockHolder& holder, const LockHolder& self);
  /// Who holds the lock `path` as its file says; nullopt when there is no lock.
  static std::optional<LockHolder> holder_of(const std::string& path);
  /// "pid P on host H (Slurm job J), since S".
  static std::string who(const LockHolder& holder);

 private:
  std::string path_;
  std::string contents_;  // what this process wrote: removed only while it is still there
};

}  // namespace slurmtune::runtime
