#include "core/schedulers/early_stopping/median_stopping_scheduler.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {

MedianStoppingScheduler::MedianStoppingScheduler(const SchedulerSpec& spec, Mode mode)
    : Scheduler(mode),
      max_t_(spec.max_t),
      grace_period_(spec.grace_period),
      min_samples_(static_cast<std::size_t>(spec.min_samples_required)) {}

void MedianStoppingScheduler::add_trial(TrialId trial, std::optional<int>) {
  trials_.insert_or_assign(trial, TrialState{});
}

double MedianStoppingScheduler::median_of(const StepBucket& bucket) const {
  if (bucket.nan_count > 0) return std::nan("");  // numpy.median propagates NaN
  const std::size_t n = bucket.means.size();
  if (n % 2 == 1) return bucket.means.kth(n / 2);
  return (bucket.means.kth(n / 2 - 1) + bucket.means.kth(n / 2)) / 2.0;
}

ReportOutcome MedianStoppingScheduler::report(TrialId trial, double step, double value) {
  const auto it = trials_.find(trial);
  if (it == trials_.end()) throw_unknown_trial(trial);
  TrialState& state = it->second;
  const double s = score(value);
  if (!std::isnan(s)) state.best = std::max(state.best, s);
  if (step >= max_t_) return ReportOutcome{SchedulerDecision::Stop, {}, {}, {}, false, {}, {}, {}};
  if (step < grace_period_) return ReportOutcome{};
  state.sum += s;
  ++state.count;
  const double mean = state.sum / static_cast<double>(state.count);

  StepBucket& bucket = steps_[step];
  ReportOutcome outcome;
  if (bucket.means.size() + bucket.nan_count >= min_samples_) {
    const double median = median_of(bucket);
    outcome.cutoff = unscore(median);
    outcome.milestone = step;
    if (state.best < median && step > grace_period_) outcome.decision = SchedulerDecision::Stop;
  }
  if (std::isnan(mean))
    ++bucket.nan_count;
  else
    bucket.means.insert(mean);
  return outcome;
}

void MedianStoppingScheduler::end_trial(TrialId trial, TrialEnd, std::optional<Observation>) {
  trials_.erase(trial);
}

SLURMTUNE_STATE(MedianStoppingScheduler, steps_, trials_)

void FifoScheduler::save_state(StateOut& /*archive*/) const {}  // it decides by step alone
void FifoScheduler::load_state(StateIn& /*archive*/) {}

}  // namespace slurmtune::core
