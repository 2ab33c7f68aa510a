#include "runtime/control/background_work.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <exception>
#include <utility>

#include "store/file/flush_thread.hpp"

namespace slurmtune::runtime {

BackgroundWork::BackgroundWork(EventLoop& loop, std::chrono::steady_clock::duration finish_budget)
    : loop_(loop),
      finish_budget_(finish_budget),
      done_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!done_fd_) protocol::throw_errno("cannot create the eventfd of the background work");
  loop_.add(done_fd_.get(), EPOLLIN, [this](std::uint32_t) {
    std::uint64_t count = 0;
    while (::read(done_fd_.get(), &count, sizeof count) == sizeof count) {
    }
    if (!run_finished(finish_budget_)) signal_done();
  });
  thread_ = store::background_thread("st-helper", [this] { serve(); });
}

BackgroundWork::~BackgroundWork() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
  loop_.remove(done_fd_.get());
}

void BackgroundWork::post(Task task) {
  {
    const std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  ++in_flight_;
  changed_.notify_all();
}

void BackgroundWork::serve() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and every task posted is done
    Task task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    Finish finish;
    try {
      finish = task();
    } catch (...) {
      finish = [error = std::current_exception()] { std::rethrow_exception(error); };
    }
    lock.lock();
    finished_.push_back(finish ? std::move(finish) : Finish([] {}));
    changed_.notify_all();
    signal_done();
  }
}

void BackgroundWork::signal_done() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto ignored = ::write(done_fd_.get(), &one, sizeof one);
}

bool BackgroundWork::run_finished(std::chrono::steady_clock::duration budget) {
  const auto began = std::chrono::steady_clock::now();
  std::deque<Finish> finished;
  {
    const std::lock_guard lock(mutex_);
    finished.swap(finished_);
  }
  // Those left for later go back before any finished since, in the order they came.
  const auto put_back = [&] {
    const std::lock_guard lock(mutex_);
    finished_.insert(finished_.begin(), std::make_move_iterator(finished.begin()),
                     std::make_move_iterator(finished.end()));
  };
  // Each finish is counted out before it runs: one that throws is not run again.
  for (bool ran = false; !finished.empty(); ran = true) {
    if (ran && std::chrono::steady_clock::now() - began >= budget) {
      put_back();
      return false;
    }
    const Finish finish = std::move(finished.front());
    finished.pop_front();
    --in_flight_;
    try {
      finish();
    } catch (...) {
      // The rest run at the next call; the error goes to the loop's caller.
      put_back();
      throw;
    }
  }
  return true;
}

void BackgroundWork::wait_for_some() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !finished_.empty(); });
}

void BackgroundWork::drain() {
  while (in_flight_ > 0) {
    wait_for_some();
    run_finished();
  }
}

}  // namespace slurmtune::runtime
