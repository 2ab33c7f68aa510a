#include "runtime/control/sampler_thread.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "store/file/flush_thread.hpp"

namespace slurmtune::runtime {

SamplerThread::SamplerThread(EventLoop& loop, core::Suggester& sampler)
    : loop_(loop), sampler_(sampler), made_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!made_fd_) protocol::throw_errno("cannot create the eventfd of the sampler's thread");
  // Waking the loop is all it takes: every turn ends in a fill(), which asks again.
  loop_.add(made_fd_.get(), EPOLLIN, [fd = made_fd_.get()](std::uint32_t) {
    std::uint64_t count = 0;
    while (::read(fd, &count, sizeof count) == sizeof count) {
    }
  });
  thread_ = store::background_thread("st-sampler", [this] { serve(); });
}

SamplerThread::~SamplerThread() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
  loop_.remove(made_fd_.get());
}

void SamplerThread::rethrow_failure() {
  if (failure_) std::rethrow_exception(failure_);
}

void SamplerThread::post(Call call) {
  {
    const std::lock_guard lock(mutex_);
    rethrow_failure();
    calls_.push_back(std::move(call));
  }
  changed_.notify_one();
}

void SamplerThread::post_suggest(core::TrialId trial) {
  post([this, trial](core::Suggester& sampler) {
    Made made{trial, sampler.suggest(trial)};
    {
      const std::lock_guard lock(mutex_);
      made_ = std::move(made);
    }
    changed_.notify_all();
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto ignored = ::write(made_fd_.get(), &one, sizeof one);
  });
}

bool SamplerThread::made(core::TrialId trial) {
  const std::lock_guard lock(mutex_);
  rethrow_failure();
  return made_ && made_->trial == trial;
}

core::Suggestion SamplerThread::take(core::TrialId trial) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return failure_ || (made_ && made_->trial == trial) || stopping_; });
  rethrow_failure();
  if (!made_ || made_->trial != trial)
    throw UsageError("no suggestion was made for trial " + std::to_string(trial));
  core::Suggestion suggestion = std::move(made_->suggestion);
  made_.reset();
  return suggestion;
}

void SamplerThread::serve() {
  // Behind the loop on a shared core: a report's decision should not wait for a
  // suggestion that is only needed by the next start (best effort; nothing depends on it).
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, 0);  // this thread's, on Linux
  if (errno == 0) ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), nice + kNiceAbove);
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || failure_ || !calls_.empty(); });
    if (stopping_ || failure_) return;
    Call call = std::move(calls_.front());
    calls_.pop_front();
    lock.unlock();
    try {
      call(sampler_);
    } catch (...) {
      lock.lock();
      failure_ = std::current_exception();
      changed_.notify_all();
      const std::uint64_t one = 1;
      [[maybe_unused]] const auto ignored = ::write(made_fd_.get(), &one, sizeof one);
      continue;
    }
    lock.lock();
  }
}

}  // namespace slurmtune::runtime
