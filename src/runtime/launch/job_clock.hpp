#pragma once
// The session's time: how long `slurmtune run` has run, and when the Slurm job it lives
// in ends, for the allocation's clock (core::AllocationClock): SLURM_JOB_END_TIME where
// Slurm sets it (23.02 and later), else `squeue -h -j JOB -o %L`, asked with a bounded
// wait.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/study/allocation_clock.hpp"
#include "core/study/study_controller.hpp"

namespace slurmtune::runtime {

struct TimeLeft {
  std::optional<double> seconds;  ///< nullopt: no limit known (no job, UNLIMITED, no answer)
  std::string source;             ///< for the log: "SLURM_JOB_END_TIME", "squeue", or why none
};

/// Seconds left in the job `env` describes. `scratch` is a file squeue's answer may use.
TimeLeft slurm_time_left(const std::map<std::string, std::string>& env, const std::string& scratch,
                         const std::string& squeue = "squeue");

/// Seconds since the session began and, once the job's end is known, the allocation's
/// clock: work that cannot reach its next rung before the end (less a margin for the
/// trials' checkpoints) is held for the next session. Without a known end every piece of
/// work fits and the attempt bookkeeping is skipped.
/// The steady clock's now, or a test's (a fake clock the test advances).
using SteadyNow = std::function<std::chrono::steady_clock::time_point()>;

class SessionClock {
 public:
  using Clock = std::chrono::steady_clock;

  /// `now`: the steady clock's, or a test's.
  explicit SessionClock(SteadyNow now = Clock::now) : now_(std::move(now)), started_(now_()) {}
  /// The session's notion of now: every deadline of the coordinator and its backends.
  Clock::time_point now() const { return now_(); }
  /// The job ends `time_left_s` from now; work must reach its next checkpoint
  /// `end_margin_s` before that. `max_resource`: where a trial ends.
  void set_end(double time_left_s, double end_margin_s, double max_resource);

  double elapsed_s() const { return std::chrono::duration<double>(now_() - started_).count(); }
  /// Unix seconds now, as the results file records times: what a launch stamps on the
  /// controller (StudyController::stamp), which hands it to the sampler and the record.
  static double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  bool has_end() const { return allocation_.has_value(); }
  /// Seconds left before the end margin; nullopt without a known end.
  std::optional<double> usable_left_s() const;
  /// For StudyController::next_launch: empty (everything fits) without a known end.
  core::FitsBeforeEnd fits_before_end() const;
  /// Seconds a new trial needs to reach its first rung, once a step has been timed.
  std::optional<double> seconds_to_first_rung() const;

  void attempt_started(core::TrialId trial, double from_step);
  void reported(core::TrialId trial, double step, std::optional<double> milestone);
  void attempt_ended(core::TrialId trial);

 private:
  SteadyNow now_;
  Clock::time_point started_;
  std::optional<core::AllocationClock> allocation_;
  double usable_until_s_ = 0;  // elapsed seconds: the job's end less the margin
};

}  // namespace slurmtune::runtime
