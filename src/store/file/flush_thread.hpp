#pragma once
// The results file's group commits, off the coordinator's loop (issue #62): a flush
// takes the rows buffered since the last one (a copy or a swap, on the loop) and this
// thread writes them and the commit row behind them while the loop goes on. At 16,384
// running trials a flush rewrites every running trial's /trials row and appends a second
// of reports; done on the loop it stalled every trial's decision for tens of ms a second.
//
// One job at a time: a flush that comes due while the last still runs waits for the
// next turn, and an explicit flush (write-ahead, the end) waits for it first, so the
// HDF5 library, which is not built thread-safe, is never called from two threads at
// once. An error of the thread's job is thrown on the loop at the next call.
#include <pthread.h>

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace slurmtune::store {

/// Starts `body` on a background thread: with every signal blocked, and (unless told
/// otherwise) below the coordinator's loop in priority (nice +10 for this thread alone;
/// threads it starts inherit it).
///
/// Signals: a process's signals (SIGCHLD, SIGTERM, SIGUSR1) stay for the thread that
/// reads them from its signalfd. A thread that left SIGCHLD unblocked would take it with
/// the default action, ignoring it, and the coordinator would never learn that a trial
/// ended.
///
/// Priority: where the loop shares a core with helper threads (trials run on the batch
/// node's cores too; the fleet harness pins the coordinator to one), a batch of launch
/// files made at the loop's priority stretched its turns: at a rung crossing of 16,384
/// trials, 547 turns over 10 ms, the longest 218 ms, against 125 and 44 ms below it
/// (doc/performance/control-plane.md). Where cores are free it changes nothing. The flush
/// thread keeps the loop's priority: a writer without a write-ahead log makes decisions
/// that ask for a checkpoint wait for its commits, which below the loop took up to 1.4 s
/// at a crossing; with the log, below the loop its commits fell behind (a third more
/// memory) for no measurable gain in the round trip (2026-12-03).
///
/// Name: the thread's name as `top -H`, `ps -L` and `perf` show it (at most 15
/// characters), so that a profile of the coordinator says which thread's time it is.
std::thread background_thread(const char* name, std::function<void()> body,
                              bool below_the_loop = true);

/// The CPU time the calling thread has used, in seconds (CLOCK_THREAD_CPUTIME_ID).
double this_thread_cpu_seconds();

class FlushThread {
 public:
  FlushThread();
  ~FlushThread();  // waits for the running job, then ends the thread
  FlushThread(const FlushThread&) = delete;
  FlushThread& operator=(const FlushThread&) = delete;

  /// Whether a job runs now.
  bool busy() const;
  /// Runs `job` on the thread; false, leaving it, while the last one still runs. Throws
  /// what an earlier job threw. `then`, if given, runs on the thread once the job is over
  /// and the thread takes the next (busy() is false): a notice there can start it.
  bool try_start(std::function<void()> job, std::function<void()> then = {});
  /// Waits for the running job and its `then`; throws what it threw.
  void wait();
  /// The CPU time the thread has used so far: what the group commits cost the
  /// coordinator, apart from its loop (the session's last lines).
  double cpu_seconds() const;

 private:
  void serve();
  void rethrow();  // with the lock held

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::function<void()> job_, then_;
  bool busy_ = false, stopping_ = false;
  bool notifying_ = false;  // a job's `then` runs (busy_ is false already)
  std::exception_ptr error_;
  std::thread thread_;  // started once the members above exist
  pthread_t handle_;    // thread_'s, for its CPU clock (cpu_seconds)
};

}  // namespace slurmtune::store
