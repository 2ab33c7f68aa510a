#pragma once
// Population Based Training as Ray Tune's PopulationBasedTraining decides it (Jaderberg
// et al. 2017): every perturbation_interval of a trial's resource (after burn_in_period)
// its last score is ranked among the population's; a trial in the lower quantile exploits
// one drawn from the upper quantile (resumes from its checkpoint with its configuration,
// explored: resampled, scaled or shifted), a trial in the upper quantile is
// checkpointed so others can clone it. Asynchronous by default; with `synch` every trial
// waits at each perturbation point until the whole population is there. When the
// population outnumbers the workers, trials take turns as in Ray: at a perturbation
// point a trial pauses if others wait, and the least-trained waiting trial runs next.
// Rules, ties and NaN: doc/schedulers.md. The ranking is an order-statistic tree, so a
// decision costs O(log n) in the population (a synchronous perturbation point visits
// every trial once).
#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "core/random.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/schedulers/scheduler_spec.hpp"

namespace slurmtune::core {

class PbtScheduler final : public Scheduler {
 public:
  PbtScheduler(const SchedulerSpec& spec, Mode mode, std::uint64_t seed);

  void add_trial(TrialId trial, std::optional<int> bracket) override;
  void trial_configured(TrialId trial, const Configuration& config) override;
  ReportOutcome report(TrialId trial, double step, double value) override;
  void end_trial(TrialId trial, TrialEnd how, std::optional<Observation> last) override;
  std::optional<Job> next_job(bool may_start_new) override;
  void close_admissions() override { closed_ = true; }
  void checkpoint_saved(TrialId trial, double step) override;
  std::vector<std::pair<TrialId, Exploit>> take_exploits() override;
  std::vector<std::pair<TrialId, double>> clonable_checkpoints() const override;
  double max_resource() const override { return max_t_; }
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;

  /// Ray's _explore: `config` with every mutation applied (draws from the scheduler's
  /// stream); `operations` says what each did.
  Configuration explore(const Configuration& config, std::string& operations);

 private:
  using Key = std::pair<double, TrialId>;  // (score, trial): Ray's stable ascending sort
  using Ranking =
      __gnu_pbds::tree<Key, __gnu_pbds::null_type, std::less<Key>, __gnu_pbds::rb_tree_tag,
                       __gnu_pbds::tree_order_statistics_node_update>;
  struct TrialState {
    bool known = false;
    Configuration config;
    std::optional<double> last_score;
    double last_perturbation_time = 0;
    double last_train_time = 0;
    std::optional<double> last_checkpoint;  // the step others clone (it exists)
    std::optional<double> wanted;           // asked for at this step, not saved yet
    std::optional<double> saved;            // the latest checkpoint it saved
    bool saving = false;                    // synch: waits at the sync point for its checkpoint
    bool finished = false;
    bool paused = false;
    std::optional<Exploit> pending;  // applied when it resumes
    template <class Archive>
    void serialize(Archive& archive) {
      archive(known, config, last_score, last_perturbation_time, last_train_time, last_checkpoint,
              wanted, saved, saving, finished, paused, pending);
    }
  };
  struct Quantiles {
    std::size_t n = 0, k = 0;  // ranked trials, trials per quantile
  };

  TrialState& state(TrialId trial);
  void set_score(TrialId trial, double score);
  Quantiles quantiles() const;
  std::size_t rank_of(TrialId trial) const;
  bool in_lower(TrialId trial, const Quantiles& q) const;
  bool in_upper(TrialId trial, const Quantiles& q) const;
  /// Ray's _checkpoint_or_exploit; returns the exploit when the trial exploits.
  std::optional<Exploit> checkpoint_or_exploit(TrialId trial, const Quantiles& q);
  void pause(TrialId trial);
  /// Trials of the population not started yet (they have trained for 0).
  bool pending() const {
    return !closed_ && (spec_.population == 0 || started_ < spec_.population);
  }
  /// A synchronous perturbation point: every trial, upper quantile first.
  void perturb_all(double time);
  /// Synchronous mode: once every live trial waits at the sync point with its checkpoint
  /// saved (or known missing), perturbs them all.
  void sync_if_all_waiting();

  PbtSpec spec_;
  double max_t_;
  Xoshiro256 rng_;
  std::vector<TrialState> trials_;                // by trial id
  Ranking ranking_;                               // trials with a score, not finished
  std::set<std::pair<double, TrialId>> waiting_;  // paused: (last_train_time, trial)
  std::set<std::pair<double, TrialId>> live_;     // not finished: (last_train_time, trial)
  double next_sync_;
  std::vector<std::pair<TrialId, Exploit>> decided_;  // for take_exploits
  std::uint64_t started_ = 0;
  std::uint64_t saving_ = 0;  // synch: trials at the sync point whose checkpoint is awaited
  bool closed_ = false;
};

}  // namespace slurmtune::core
