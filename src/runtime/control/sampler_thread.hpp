#pragma once
// `[sampler] suggest_ahead` in `slurmtune run` (issue #62): the sampler's calls run on a
// thread of their own, in the order the loop posts them, so a suggestion made ahead
// (core::SuggestionsAhead) is made while the loop answers reports. The thread writes an
// eventfd the loop watches when a suggestion is made; the loop's next fill() launches
// the trial that waited for it. Posting costs the loop a queue push per event.
//
// The loop must outlive it (the coordinator declares its loop before the controller that
// owns the suggester). The sampler is the thread's alone from here on: nothing on the
// loop may read it (its continuation model included; the study file refuses freeze_thaw
// with suggest_ahead).
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "core/search/suggestions_ahead.hpp"
#include "protocol/wire/unique_fd.hpp"
#include "runtime/control/event_loop.hpp"

namespace slurmtune::runtime {

class SamplerThread final : public core::SamplerCalls {
 public:
  /// How much nicer than the loop the thread runs: on a core they share, the loop's
  /// wake-ups preempt it, since a report's decision should not queue behind a suggestion
  /// that only the next start needs (doc/performance/control-plane.md, "Suggestions made
  /// ahead").
  static constexpr int kNiceAbove = 10;

  SamplerThread(EventLoop& loop, core::Suggester& sampler);
  /// Waits for the call in progress (a suggestion: milliseconds); the rest are dropped.
  ~SamplerThread() override;
  SamplerThread(const SamplerThread&) = delete;
  SamplerThread& operator=(const SamplerThread&) = delete;

  /// Each of these rethrows, on the loop, what a call threw on the thread.
  void post(Call call) override;
  void post_suggest(core::TrialId trial) override;
  bool made(core::TrialId trial) override;
  core::Suggestion take(core::TrialId trial) override;

 private:
  struct Made {
    core::TrialId trial;
    core::Suggestion suggestion;
  };
  void serve();
  void rethrow_failure();  // with mutex_ held

  EventLoop& loop_;
  core::Suggester& sampler_;
  protocol::UniqueFd made_fd_;  // written when a suggestion is made (or a call failed)
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Call> calls_;
  std::optional<Made> made_;
  std::exception_ptr failure_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace slurmtune::runtime
