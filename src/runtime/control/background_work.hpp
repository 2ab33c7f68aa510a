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
//
// The loop runs finishes for at most kFinishBudget a turn and the rest in later turns:
// at a rung crossing of thousands of trials the relaunches' files are made within
// moments, and running all their finishes (each starts a trial) in one turn held the
// loop 37-111 ms while the reports behind them waited.
#include <chrono>
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

  /// Loop time the finishes may take a turn (at least one runs).
  static constexpr std::chrono::milliseconds kFinishBudget{5};

  explicit BackgroundWork(EventLoop& loop,
                          std::chrono::steady_clock::duration finish_budget = kFinishBudget);
  /// Finishes the tasks posted (their finishes do not run), then ends the thread.
  ~BackgroundWork();
  BackgroundWork(const BackgroundWork&) = delete;
  BackgroundWork& operator=(const BackgroundWork&) = delete;

  void post(Task task);
  /// Tasks posted whose finish has not run yet.
  std::size_t in_flight() const { return in_flight_; }
  /// Runs the finishes of the tasks done so far, in order, until `budget` is spent (at
  /// least one runs); returns whether none is left.
  bool run_finished(
      std::chrono::steady_clock::duration budget = std::chrono::steady_clock::duration::max());
  /// Waits for every task posted, including those a finish posts, and runs each finish:
  /// for the end of a session and for its start, where nothing else runs.
  void drain();

 private:
  void serve();
  void wait_for_some();
  /// Makes the eventfd readable again: finishes are left for the next turn.
  void signal_done();

  EventLoop& loop_;
  std::chrono::steady_clock::duration finish_budget_;
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
