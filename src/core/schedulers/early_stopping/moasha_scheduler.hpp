#pragma once
// Multi-objective asynchronous successive halving (MO-ASHA; Schmucker et al. 2021,
// "Multi-objective multi-fidelity hyperparameter optimization with application to
// fairness"; Salinas et al. 2021): ASHA's rungs, stopping variant, with each rung ranked
// by every objective instead of one metric. A trial reaching a rung is recorded there
// with the last reported value of each objective and continues when it comes among the
// first 1/reduction_factor of the rung in the order: non-dominated fronts in turn, each
// front as an epsilon-net (the point best in the first objective, then repeatedly the
// point farthest from those already taken). Every rule: doc/schedulers.md.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/objectives/objectives.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/schedulers/scheduler_spec.hpp"

namespace slurmtune::core {

/// The rung's order: indices into `points` (losses, smaller is better), fronts in turn,
/// each as an epsilon-net in objectives scaled by their range over all points. Ties go
/// to the earlier point.
std::vector<std::size_t> moasha_order(const std::vector<std::vector<double>>& points);

class MoashaScheduler final : public Scheduler {
 public:
  explicit MoashaScheduler(const SchedulerSpec& spec);

  void add_trial(TrialId trial, std::optional<int> bracket) override;
  void reported_metrics(TrialId trial, double step, const std::vector<double>& row) override;
  ReportOutcome report(TrialId trial, double step, double value) override;
  void end_trial(TrialId trial, TrialEnd how, std::optional<Observation> last) override;
  double max_resource() const override { return max_t_; }
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;

 private:
  struct Rung {
    double milestone = 0;
    std::vector<std::vector<double>> losses;  // in the order trials were recorded
    template <class Archive>
    void serialize(Archive& archive) {
      archive(milestone, losses);
    }
  };
  struct TrialState {
    ObjectiveTracker reported;
    std::uint64_t recorded = 0;  // bit k: recorded at rung k
    template <class Archive>
    void serialize(Archive& archive) {
      archive(reported, recorded);
    }
  };

  double max_t_;
  double reduction_factor_;
  std::vector<StudyObjective> objectives_;
  ObjectiveColumns columns_;  // each objective's column in a metric row
  std::vector<Rung> rungs_;   // ascending
  std::unordered_map<TrialId, TrialState> trials_;
};

}  // namespace slurmtune::core
