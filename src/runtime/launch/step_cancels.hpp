#pragma once
// `scancel --signal=KILL JOBID.STEPID` for the Slurm steps of trials that ignored SIGTERM
// or lost a node agent, without waiting on the coordinator's loop (issue #61): scancel
// asks slurmctld, which under load (or when it does not answer) takes seconds, and the
// loop waited for each one in turn. The SIGKILL to the step's `srun` goes out at once
// either way; scancel reaches the step's tasks that srun's death leaves running until
// Slurm notices.
//
// At most kAtOnce scancels run at once (the rest wait in line: at most the steps of the
// trials running), each for at most kWaitLimit before it is killed and the log says so:
// nothing waits without a bound. ProcessBackend polls them before it reaps its trials, so
// an ended scancel is never the child its waitid names.
#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "runtime/launch/child_process.hpp"

namespace slurmtune::runtime {

class StepCancels {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kAtOnce = 8;
  static constexpr std::chrono::seconds kWaitLimit{30};

  /// `scancel`: the command (its path, or a name PATH finds); `wait_limit`: how long one
  /// may run, and how long finish() waits for all.
  explicit StepCancels(std::string scancel = "scancel",
                       std::chrono::milliseconds wait_limit = kWaitLimit)
      : scancel_(std::move(scancel)), wait_limit_(wait_limit) {}

  /// Asks Slurm to SIGKILL every task of step "JOBID.STEPID"; returns at once.
  void cancel(const std::string& step, Clock::time_point now = Clock::now());
  /// Reaps the scancels that ended, ends those past the wait limit, starts those in line.
  void poll(Clock::time_point now = Clock::now());
  /// Waits for the scancels running and in line, at most the wait limit in all, then ends
  /// those still running and drops those in line (each said in the log): for the
  /// session's end, where nothing else runs.
  void finish();
  /// Running or waiting in line.
  std::size_t pending() const { return running_.size() + waiting_.size(); }
  /// Cancels asked for in this session.
  std::size_t asked() const { return asked_; }

 private:
  struct Running {
    std::string step;
    ChildProcess process;
    Clock::time_point deadline;
  };
  void start(const std::string& step, Clock::time_point now);

  std::string scancel_;
  std::chrono::milliseconds wait_limit_;
  std::vector<Running> running_;
  std::deque<std::string> waiting_;
  std::size_t asked_ = 0;
};

}  // namespace slurmtune::runtime
