#pragma once
// The median stopping rule (Golovin et al., "Google Vizier", KDD 2017; Ray Tune's
// MedianStoppingRule): after a grace period, stop a trial whose best value so far is
// worse than the median of the other trials' running averages at the same step.
#include <cmath>
#include <unordered_map>

#include "core/schedulers/early_stopping/order_statistic_tree.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/schedulers/scheduler_spec.hpp"

namespace slurmtune::core {

class MedianStoppingScheduler final : public Scheduler {
 public:
  MedianStoppingScheduler(const SchedulerSpec& spec, Mode mode);

  void add_trial(TrialId trial, std::optional<int> bracket) override;
  ReportOutcome report(TrialId trial, double step, double value) override;
  void end_trial(TrialId trial, TrialEnd how, std::optional<Observation> last) override;
  double max_resource() const override { return max_t_; }
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;

 private:
  struct StepBucket {
    OrderStatisticTree<double> means;  // running-average scores of trials at this step
    std::size_t nan_count = 0;
    template <class Archive>
    void serialize(Archive& archive) {
      archive(means, nan_count);
    }
  };
  struct TrialState {
    double sum = 0;  // scores reported at steps >= grace_period
    std::size_t count = 0;
    double best = -HUGE_VAL;  // best score of any report (NaN ignored)
    template <class Archive>
    void serialize(Archive& archive) {
      archive(sum, count, best);
    }
  };
  double median_of(const StepBucket& bucket) const;

  double max_t_;
  double grace_period_;
  std::size_t min_samples_;
  std::unordered_map<double, StepBucket> steps_;
  std::unordered_map<TrialId, TrialState> trials_;
};

/// No early stopping: every trial runs to max_t (first-in, first-out).
class FifoScheduler final : public Scheduler {
 public:
  FifoScheduler(double max_t, Mode mode) : Scheduler(mode), max_t_(max_t) {}
  void add_trial(TrialId, std::optional<int>) override {}
  ReportOutcome report(TrialId, double step, double) override {
    return ReportOutcome{step >= max_t_ ? SchedulerDecision::Stop : SchedulerDecision::Continue,
                         {},
                         {},
                         {},
                         false,
                         {},
                         {},
                         {}};
  }
  void end_trial(TrialId, TrialEnd, std::optional<Observation>) override {}
  double max_resource() const override { return max_t_; }
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;

 private:
  double max_t_;
};

}  // namespace slurmtune::core
