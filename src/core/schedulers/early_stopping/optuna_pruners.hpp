#pragma once
// Successive halving and Hyperband with Optuna's SuccessiveHalvingPruner and
// HyperbandPruner decisions (`semantics = "optuna"`; rules in doc/schedulers.md).
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/schedulers/early_stopping/order_statistic_tree.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/schedulers/scheduler_spec.hpp"

namespace slurmtune::core {

/// The rungs of one successive-halving ladder: rung k holds the scores of every trial
/// that passed through it, the trial's own score included.
class OptunaHalvingLadder {
 public:
  OptunaHalvingLadder(std::int64_t reduction_factor, std::int64_t min_early_stopping_rate,
                      std::int64_t bootstrap_count)
      : rf_(reduction_factor), rate_(min_early_stopping_rate), bootstrap_(bootstrap_count) {}

  /// SuccessiveHalvingPruner.prune for a trial that has passed `passed` rungs so far
  /// (updated in place), reporting `score` (maximised) at `step`.
  ReportOutcome prune(int& passed, double step, double score, std::int64_t min_resource,
                      const Scheduler& owner);

  OptunaHalvingLadder() = default;  // one a snapshot is read into
  template <class Archive>
  void serialize(Archive& archive) {
    archive(rf_, rate_, bootstrap_, rungs_);
  }

 private:
  std::int64_t rf_ = 0;
  std::int64_t rate_ = 0;
  std::int64_t bootstrap_ = 0;
  std::vector<OrderStatisticTree<double>> rungs_;
};

class OptunaSuccessiveHalvingScheduler final : public Scheduler {
 public:
  OptunaSuccessiveHalvingScheduler(const SchedulerSpec& spec, Mode mode);

  void add_trial(TrialId trial, std::optional<int> bracket) override;
  ReportOutcome report(TrialId trial, double step, double value) override;
  void end_trial(TrialId trial, TrialEnd how, std::optional<Observation> last) override;
  double max_resource() const override { return max_t_; }
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;

 private:
  double max_t_;
  std::optional<std::int64_t> min_resource_;  // "auto" until a trial completes
  std::int64_t longest_completed_ = -1;
  OptunaHalvingLadder ladder_;
  std::unordered_map<TrialId, int> passed_;
};

class OptunaHyperbandScheduler final : public Scheduler {
 public:
  OptunaHyperbandScheduler(const SchedulerSpec& spec, Mode mode, std::string study_name);

  void add_trial(TrialId trial, std::optional<int> bracket) override;
  ReportOutcome report(TrialId trial, double step, double value) override;
  void end_trial(TrialId trial, TrialEnd how, std::optional<Observation> last) override;
  int bracket_of(TrialId trial) const override;
  double max_resource() const override { return max_t_; }
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;

  /// Number of brackets once known (0 while max_resource is "auto" and nothing completed).
  std::size_t bracket_count() const { return ladders_.size(); }

 private:
  struct TrialState {
    std::optional<int> forced_bracket;
    int passed = 0;
    template <class Archive>
    void serialize(Archive& archive) {
      archive(forced_bracket, passed);
    }
  };
  void try_initialise();
  int bracket_by_hash(TrialId trial) const;

  double max_t_;
  std::int64_t min_resource_;
  std::optional<std::int64_t> max_resource_;
  std::int64_t rf_;
  std::int64_t bootstrap_;
  std::string study_name_;
  std::int64_t longest_completed_ = -1;
  std::vector<OptunaHalvingLadder> ladders_;
  std::vector<std::uint64_t> cumulative_budgets_;
  std::unordered_map<TrialId, TrialState> trials_;
};

/// CRC-32 (IEEE 802.3, as zlib and Python's binascii.crc32).
std::uint32_t crc32(std::string_view bytes);

}  // namespace slurmtune::core
