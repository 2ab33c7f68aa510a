#include "runtime/control/event_loop.hpp"

#include <sys/epoll.h>
#include <sys/signalfd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <span>
#include <vector>

namespace slurmtune::runtime {

EventLoop::EventLoop() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (!epoll_) protocol::throw_errno("epoll_create1");
}

void EventLoop::add(int fd, std::uint32_t events, Callback callback) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0)
    protocol::throw_errno("epoll_ctl ADD");
  callbacks_[fd] = std::move(callback);
}

void EventLoop::modify(int fd, std::uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev) != 0)
    protocol::throw_errno("epoll_ctl MOD");
}

void EventLoop::remove(int fd) {
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  callbacks_.erase(fd);
}

int EventLoop::run_once(int timeout_ms, std::chrono::steady_clock::duration budget) {
  std::array<epoll_event, 128> ready{};
  const int n =
      ::epoll_wait(epoll_.get(), ready.data(), static_cast<int>(ready.size()), timeout_ms);
  woke_at_ = std::chrono::steady_clock::now();
  if (n < 0) {
    if (errno == EINTR) return 0;
    protocol::throw_errno("epoll_wait");
  }
  const auto batch = std::span(ready.data(), static_cast<std::size_t>(n));
  // Those the last turn left first: a budget that runs out on the same busy connections
  // turn after turn would otherwise never reach the ones behind them.
  if (!deferred_.empty()) {
    const auto rank = [&](const epoll_event& e) {  // the order they were left in, then the rest
      return std::find(deferred_.begin(), deferred_.end(), e.data.fd) - deferred_.begin();
    };
    std::stable_sort(batch.begin(), batch.end(),
                     [&](const epoll_event& a, const epoll_event& b) { return rank(a) < rank(b); });
    deferred_.clear();
  }
  int ran = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (ran > 0 && std::chrono::steady_clock::now() - woke_at_ > budget) {
      for (; i < batch.size(); ++i)
        deferred_.push_back(batch[i].data.fd);
      break;
    }
    // A callback may have removed a later fd of this batch: look each one up afresh,
    // and copy the callback so it may remove itself while running.
    const auto it = callbacks_.find(batch[i].data.fd);
    if (it == callbacks_.end()) continue;
    Callback callback = it->second;
    callback(batch[i].events);
    ++ran;
  }
  return ran;
}

protocol::UniqueFd make_signal_fd(std::initializer_list<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (const int s : signals)
    sigaddset(&set, s);
  if (::pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) protocol::throw_errno("pthread_sigmask");
  protocol::UniqueFd fd(::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!fd) protocol::throw_errno("signalfd");
  return fd;
}

}  // namespace slurmtune::runtime
