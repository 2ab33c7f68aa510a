#pragma once
// Work the coordinator's loop must not wait for (issue #62), on one helper thread: a
// task runs there and returns what is left to do on the loop (its finish), which the
// loop runs, in the order the tasks were posted, once an eventfd it watches says so.
// PBT's checkpoint copies are the first user: a 2 GB copy on the loop stalled every
// trial's decision for seconds.
//
// A task must touch nothing the loop owns; its finish may touch anything. One thread
// and first in, first out: a task posted after another sees everything the earlier one
// did on the file system (PBT clones a donor's kept checkpoint only after it is kept).
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "protocol/wire/unique_fd.hpp"
#include "runtime/control/event_loop.hpp"

namespace slurmtune::runtime {

class BackgroundWork {
 public:
  /// What is left to do on the loop once a task is done.
  using Finish = std::function<void()>;
  /// Runs on the helper thread; an exception it throws is rethrown on the loop, by the
  /// finish that takes its place.
  using Task = std::function<Finish()>;

  explicit BackgroundWork(EventLoop& loop);
  /// Finishes the tasks posted (their finishes do not run), then ends the thread.
  ~BackgroundWork();
  BackgroundWork(const BackgroundWork&) = delete;
  BackgroundWork& operator=(const BackgroundWork&) = delete;

  void post(Task task);
  /// Tasks posted whose finish has not run yet.
  std::size_t in_flight() const { return in_flight_; }
  /// Runs the finishes of the tasks done so far, in order (the loop does, when told).
  void run_finished();
  /// Waits for every task posted, including those a finish posts, and runs each finish:
  /// for the end of a session and for its start, where nothing else runs.
  void drain();

 private:
  void serve();
  void wait_for_some();

  EventLoop& loop_;
  protocol::UniqueFd done_fd_;  // an eventfd the thread signals when a task is done
  std::size_t in_flight_ = 0;   // the loop's count: posted, finish not run
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Task> tasks_;
  std::deque<Finish> finished_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace slurmtune::runtime
