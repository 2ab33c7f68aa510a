#pragma once
// A minimal epoll loop: file descriptors with callbacks, one thread, no timers (the
// caller passes the longest it may wait, and does its periodic work between waits).
#include <chrono>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "protocol/wire/unique_fd.hpp"

namespace slurmtune::runtime {

class EventLoop {
 public:
  using Callback = std::function<void(std::uint32_t events)>;

  EventLoop();
  /// Watches `fd` for `events` (EPOLLIN, EPOLLOUT, ...); the callback may add or remove
  /// any fd, including its own.
  void add(int fd, std::uint32_t events, Callback callback);
  void modify(int fd, std::uint32_t events);
  void remove(int fd);
  /// Waits up to `timeout_ms` and runs the callbacks of ready fds; returns how many ran.
  /// With a `budget`, callbacks stop once it has passed since the wait ended: the fds
  /// left are reported again by the next wait (level-triggered), and run first then.
  int run_once(int timeout_ms, std::chrono::steady_clock::duration budget =
                                   std::chrono::steady_clock::duration::max());
  /// The last run_once's budget ran out with ready fds left: messages are waiting.
  bool behind() const { return !deferred_.empty(); }
  /// When the last run_once stopped waiting: what followed was work, not waiting.
  std::chrono::steady_clock::time_point woke_at() const { return woke_at_; }

 private:
  protocol::UniqueFd epoll_;
  std::unordered_map<int, Callback> callbacks_;
  std::vector<int> deferred_;  // fds ready when the last turn's budget ran out
  std::chrono::steady_clock::time_point woke_at_ = std::chrono::steady_clock::now();
};

/// A signalfd for `signals`, which are blocked for normal delivery in this thread (and
/// in threads it creates later); children must unblock them (ChildProcess does).
protocol::UniqueFd make_signal_fd(std::initializer_list<int> signals);

}  // namespace slurmtune::runtime
