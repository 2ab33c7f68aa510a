#pragma once
// The allocation's clock: whether a piece of work can reach its next checkpoint before
// the Slurm allocation ends. A trial checkpoints at every rung it passes (slurmtune asks
// it to), so work launched too late to reach its next rung is lost when the job ends:
// its start-up and the steps since its last rung are computed again in the next job.
// Pure: fed times by its caller (the coordinator's clock, the simulator's virtual one).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "core/schedulers/scheduler.hpp"

namespace slurmtune::core {

class AllocationClock {
 public:
  /// `max_resource`: where a trial ends (its last checkpoint at the latest).
  explicit AllocationClock(double max_resource);

  /// An attempt of `trial` began at `time_s`, resuming after `from_step` (0: new).
  void attempt_started(TrialId trial, double from_step, double time_s);
  /// A report at `step`; `milestone` is the rung it was judged at, if any (where
  /// checkpoints happen).
  void reported(TrialId trial, double step, double time_s, std::optional<double> milestone);
  void attempt_ended(TrialId trial);

  /// The resource of the next checkpoint after `step`: the lowest rung milestone seen so
  /// far above it, else max_resource.
  double next_milestone(double step) const;
  /// Seconds from launching an attempt at `step` to its next checkpoint: the median
  /// start-up (launch to first report, less its steps) plus the median seconds per unit
  /// of resource times the distance. nullopt until a step has been timed.
  std::optional<double> seconds_to_next_milestone(double step) const;
  /// True when that work fits in `time_left_s`, or when nothing has been timed yet.
  bool fits(double step, double time_left_s) const;

 private:
  struct Attempt {
    bool open = false;  // started and not ended
    double from_step = 0, started_s = 0;
    std::optional<double> last_step, last_s;
  };
  static double median(std::vector<double> samples);
  static void keep(std::vector<double>& samples, std::size_t& next, double value);

  double max_resource_;
  std::set<double> milestones_;
  // By trial id: found on every report, an index instead of a hash map's miss or two
  // (a deque: growing it never copies them all at once).
  std::deque<Attempt> attempts_;
  // The most recent samples (a ring of kSamples): the pace of the study now.
  std::vector<double> seconds_per_unit_, startup_s_;
  std::size_t next_pace_ = 0, next_startup_ = 0;
};

/// Seconds in Slurm's time-left form ("59:23", "1:00:00", "2-03:04:05", "2-03"), as
/// `squeue -o %L` prints it; nullopt for "UNLIMITED", "NOT_SET" and anything malformed.
std::optional<double> parse_slurm_time_left(std::string_view text);

}  // namespace slurmtune::core
