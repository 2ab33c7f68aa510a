#pragma once
// Asynchronous successive halving, stopping variant, with Ray Tune's
// AsyncHyperBandScheduler decisions (see doc/schedulers.md for every rule).
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/schedulers/early_stopping/order_statistic_tree.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/schedulers/scheduler_spec.hpp"

namespace slurmtune::core {

class AshaScheduler final : public Scheduler {
 public:
  AshaScheduler(const SchedulerSpec& spec, Mode mode, std::uint64_t seed);

  void add_trial(TrialId trial, std::optional<int> bracket) override;
  ReportOutcome report(TrialId trial, double step, double value) override;
  void end_trial(TrialId trial, TrialEnd how, std::optional<Observation> last) override;
  int bracket_of(TrialId trial) const override;
  double max_resource() const override { return max_t_; }
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;

  /// Milestones of bracket b, ascending.
  std::vector<double> milestones(int bracket) const;

 private:
  struct Rung {
    double milestone;
    OrderStatisticTree<double> values;  // scores recorded here, NaN excluded
    std::size_t nan_count = 0;
    template <class Archive>
    void serialize(Archive& archive) {
      archive(milestone, values, nan_count);
    }
  };
  struct TrialState {
    int bracket = 0;
    std::uint64_t recorded = 0;  // bit k: the trial holds a value in rung k
    template <class Archive>
    void serialize(Archive& archive) {
      archive(bracket, recorded);
    }
  };

  ReportOutcome judge(TrialState& trial, double step, double score);
  double cutoff(const Rung& rung) const;
  TrialState& state_of(TrialId trial);

  double max_t_;
  double reduction_factor_;
  bool stop_last_trials_;
  std::uint64_t seed_;
  std::vector<std::vector<Rung>> brackets_;  // [bracket][rung], rungs ascending
  std::vector<double> bracket_weights_;      // cumulative, normalised
  std::unordered_map<TrialId, TrialState> trials_;
};

/// numpy.percentile(values, q, method="linear") for the sorted keys of `tree`, with
/// numpy's interpolation formula (so ±inf behave exactly as in numpy). `fraction` =
/// q / 100. The tree must not be empty.
double linear_percentile(const OrderStatisticTree<double>& tree, double fraction);

}  // namespace slurmtune::core
