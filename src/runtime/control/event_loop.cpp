#include "runtime/control/event_loop.hpp"

#include <sys/epoll.h>
#include <sys/signalfd.h>

#include <array>
#include <cerrno>
#include <csignal>
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

int EventLoop::run_once(int timeout_ms) {
  std::array<epoll_event, 128> ready{};
  const int n =
      ::epoll_wait(epoll_.get(), ready.data(), static_cast<int>(ready.size()), timeout_ms);
  woke_at_ = std::chrono::steady_clock::now();
  if (n < 0) {
    if (errno == EINTR) return 0;
    protocol::throw_errno("epoll_wait");
  }
  int ran = 0;
  for (int i = 0; i < n; ++i) {
    // A callback may have removed a later fd of this batch: look each one up afresh,
    // and copy the callback so it may remove itself while running.
    const auto it = callbacks_.find(ready[static_cast<std::size_t>(i)].data.fd);
    if (it == callbacks_.end()) continue;
    Callback callback = it->second;
    callback(ready[static_cast<std::size_t>(i)].events);
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
