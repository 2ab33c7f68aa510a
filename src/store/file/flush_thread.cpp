#include "store/file/flush_thread.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <utility>

namespace slurmtune::store {

namespace {

// How far below the loop background threads run (nice steps: CFS gives a thread at +10
// about a tenth of a core it shares with one at +0).
constexpr int kBelowTheLoop = 10;

void yield_to_the_loop() {
  const auto thread = static_cast<id_t>(::gettid());
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, thread);
  if (errno != 0) return;
  // Nothing to do about a refusal: the thread runs at the process's priority, as before.
  (void)::setpriority(PRIO_PROCESS, thread, std::min(now + kBelowTheLoop, 19));
}

}  // namespace

std::thread background_thread(const char* name, std::function<void()> body, bool below_the_loop) {
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &before);
  std::thread thread([name, body = std::move(body), below_the_loop] {
    (void)::pthread_setname_np(::pthread_self(), name);  // longer than 15: left unnamed
    if (below_the_loop) yield_to_the_loop();
    body();
  });
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return thread;
}

double this_thread_cpu_seconds() {
  timespec used{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used) != 0) return 0;
  return static_cast<double>(used.tv_sec) + static_cast<double>(used.tv_nsec) / 1e9;
}

FlushThread::FlushThread()
    : thread_(background_thread(
          "st-flush", [this] { serve(); }, false)),
      handle_(thread_.native_handle()) {}

FlushThread::~FlushThread() {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return !busy_ && !notifying_; });
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

bool FlushThread::busy() const {
  const std::lock_guard lock(mutex_);
  return busy_;
}

bool FlushThread::try_start(std::function<void()> job, std::function<void()> then) {
  {
    const std::lock_guard lock(mutex_);
    rethrow();
    if (busy_) return false;
    job_ = std::move(job);
    then_ = std::move(then);
    busy_ = true;
  }
  changed_.notify_all();
  return true;
}

void FlushThread::wait() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !busy_ && !notifying_; });
  rethrow();
}

double FlushThread::cpu_seconds() const {
  // The thread's own clock, read from here: it lives until the destructor has joined it.
  clockid_t clock{};
  timespec used{};
  if (pthread_getcpuclockid(handle_, &clock) != 0 || ::clock_gettime(clock, &used) != 0) return 0;
  return static_cast<double>(used.tv_sec) + static_cast<double>(used.tv_nsec) / 1e9;
}

void FlushThread::rethrow() {
  if (!error_) return;
  const std::exception_ptr error = std::exchange(error_, nullptr);
  std::rethrow_exception(error);
}

void FlushThread::serve() {
  for (;;) {
    std::function<void()> job, then;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return busy_ || stopping_; });
      if (!busy_) return;  // stopping, nothing left to write
      job = std::move(job_);
      then = std::move(then_);
    }
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    job = nullptr;  // what it captured goes now, not while the owner goes on
    const bool notify = then && !error;
    {
      const std::lock_guard lock(mutex_);
      error_ = error;
      busy_ = false;
      notifying_ = notify;
    }
    changed_.notify_all();
    if (!notify) continue;
    // After busy_ is false, so the notice may start the next job; wait() waits for it
    // too, so an owner that returns from wait() may change what `then` reads.
    then();
    then = nullptr;
    {
      const std::lock_guard lock(mutex_);
      notifying_ = false;
    }
    changed_.notify_all();
  }
}

}  // namespace slurmtune::store
