#pragma once
// Synchronous Hyperband (Li et al., JMLR 2018; Ray Tune's HyperBandScheduler): brackets
// of n0 trials start at budget r0; when every trial of a bracket has reached the rung
// (or ended), the top 1/eta are resumed at eta times the budget and the rest stopped.
#include <deque>
#include <unordered_map>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/schedulers/scheduler_spec.hpp"

namespace slurmtune::core {

class HyperbandScheduler final : public Scheduler {
 public:
  HyperbandScheduler(const SchedulerSpec& spec, Mode mode);

  void add_trial(TrialId trial, std::optional<int> bracket) override;
  ReportOutcome report(TrialId trial, double step, double value) override;
  void end_trial(TrialId trial, TrialEnd how, std::optional<Observation> last) override;
  std::optional<Job> next_job(bool may_start_new) override;
  void close_admissions() override;
  std::vector<TrialId> take_dropped() override;
  int bracket_of(TrialId trial) const override;
  double max_resource() const override { return max_t_; }
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;

  /// s of the k-th bracket opened (brackets cycle s_max, ..., 0, s_max, ...).
  int bracket_s(int k) const { return brackets_.at(static_cast<std::size_t>(k)).s; }
  /// Configurations a bracket with exponent s starts: ceil((s_max+1)/(s+1) * eta^s).
  std::size_t bracket_size(int s) const;
  /// Budget of rung i in a bracket with exponent s: max_t * eta^(i - s).
  double rung_budget(int s, int i) const;

 private:
  struct Bracket {
    int s = 0;
    std::size_t target = 0;   // n0
    std::size_t members = 0;  // trials added so far
    bool full = false;
    int rung = 0;
    std::size_t running = 0;                          // members working toward the current rung
    std::vector<std::pair<double, TrialId>> arrived;  // (score, trial) at the current rung
    template <class Archive>
    void serialize(Archive& archive) {
      archive(s, target, members, full, rung, running, arrived);
    }
  };
  struct TrialState {
    int bracket = 0;
    bool running = true;
    template <class Archive>
    void serialize(Archive& archive) {
      archive(bracket, running);
    }
  };
  void open_bracket();
  void maybe_advance(int bracket);

  double max_t_;
  double eta_;
  int s_max_;
  std::vector<Bracket> brackets_;
  std::unordered_map<TrialId, TrialState> trials_;
  std::deque<Job> resumable_;
  std::vector<TrialId> dropped_;
  bool closed_ = false;
};

}  // namespace slurmtune::core
