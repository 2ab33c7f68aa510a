#pragma once
// Freeze-thaw scheduling on asynchronous successive halving's rungs: trials pause at every
// rung, and each free worker goes to whichever job the model expects most of per unit of
// resource: a new configuration run to the first rung, or a paused trial resumed from its
// checkpoint to its next rung (DyHPO, Wistuba, Kadra and Grabocka, NeurIPS 2022; freeze-thaw
// BO, Swersky, Snoek and Adams 2014). The model is the sampler's (MOBSTER's GP over
// configuration and resource: ContinuationModel), so unlike promotion a paused trial can be
// thawed whenever the model thinks it worth it, however its rung ranks it, and a rung's
// best need not wait for the rung to fill.
//
// A share of the jobs (promotion_mix) follows asha_promotion's rule instead, so the race
// cannot starve on a model that keeps resuming a few trials; so do all jobs before the
// model has data. Which rule decides job k is a coin drawn from (seed, k), k counting the
// starts and resumptions so far: a pure function of the events, so replay and resume
// decide as the run did. The choice is also independent of whether a start is allowed
// (a resumption the model picks beats the start), which is what lets `replay`, which asks
// at each recorded resumption with starts forbidden, get the same answer.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/schedulers/early_stopping/asha_promotion_scheduler.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/schedulers/scheduler_spec.hpp"

namespace slurmtune::core {

class FreezeThawScheduler final : public Scheduler {
 public:
  FreezeThawScheduler(const SchedulerSpec& spec, Mode mode, std::uint64_t seed);

  void add_trial(TrialId trial, std::optional<int> bracket) override;
  ReportOutcome report(TrialId trial, double step, double value) override {
    return rungs_.report(trial, step, value);
  }
  void end_trial(TrialId trial, TrialEnd how, std::optional<Observation> last) override {
    rungs_.end_trial(trial, how, last);
  }
  std::optional<Job> next_job(bool may_start_new) override;
  std::vector<TrialId> take_dropped() override;
  bool reopen(TrialId trial) override { return rungs_.reopen(trial); }
  bool reopens() const override { return true; }
  void close_admissions() override { rungs_.close_admissions(); }
  void open_admissions() override { rungs_.open_admissions(); }
  double max_resource() const override { return rungs_.max_resource(); }
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;
  void use_model(ContinuationModel* model) override { model_ = model; }
  void use_trust_lessons(const TrustLessons& lessons) override {
    rungs_.use_trust_lessons(lessons);
  }

 private:
  struct Choice {
    std::optional<TrialId> resume;  // nullopt: start a new trial
    std::optional<ResumeReason> reason;
  };
  /// The next job, without taking it; nullopt: nothing to do now.
  std::optional<Choice> choose(bool may_start_new);
  std::optional<Choice> promotion_rule(bool may_start_new);

  AshaPromotionScheduler rungs_;  // rungs, pauses and the promotion rule
  double promotion_mix_;
  JobCost cost_;
  std::uint64_t seed_;
  ContinuationModel* model_ = nullptr;
  TrialId next_trial_ = 0;  // the id the next start gets
  std::uint64_t jobs_ = 0;  // starts and resumptions so far
};

}  // namespace slurmtune::core
