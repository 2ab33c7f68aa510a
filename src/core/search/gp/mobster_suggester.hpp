#pragma once
// MOBSTER's searcher (Klein, Tiao, Lienart, Archambeau, Seeger 2020, "Model-based
// asynchronous hyperparameter and neural architecture search"), clean-room from the
// paper: one Gaussian process over (configuration, resource) learns from every rung a
// trial was judged at, and a new trial's configuration maximises expected improvement at
// the first resource it will reach. Trials still on their way there are "pending": the
// model is told they will land on its own mean there (a kriging-believer fantasy), which
// keeps it from proposing the same region to every free worker at once. Only the
// `max_pending` started last are fantasised, so that a suggestion's cost is bounded with
// thousands of workers (issue #62), and the observations it conditions on are chosen
// incrementally (observation_choice.hpp). In a launch wave (more trials pending than
// that) a block of `wave` trials shares one scoring of candidates (mobster_model.cpp,
// issue #61), so a wave of thousands of free workers does not wait for a scoring each.
//
// Every suggestion is a function of the events seen so far: the candidates come from a
// stream seeded by (seed, trial), and the kernel hyperparameters at n observations are
// fitted, from a fixed start, on the first m of them in arrival order (m the largest
// point of the refit ladder not above n). A resumed study, whose suggester is rebuilt
// from the recorded events, therefore suggests what the uninterrupted one would have.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "core/random.hpp"
#include "core/schedulers/continuation_model.hpp"
#include "core/search/gp/gaussian_process.hpp"
#include "core/search/gp/observation_choice.hpp"
#include "core/search/gp/prior_region.hpp"
#include "core/search/gp/startup_design.hpp"
#include "core/search/gp/step_cost_model.hpp"
#include "core/search/gp/surrogate.hpp"
#include "core/search/gp/target_transform.hpp"
#include "core/search/gp/trust_region.hpp"
#include "core/search/sampler_spec.hpp"
#include "core/search/suggester.hpp"

namespace slurmtune::core {

/// How configurations enter the model: a number's position in its domain (log domains
/// in log space, integers as the centre of their slot: to_unit()), a choice as one-hot
/// coordinates. Constants are left out.
class ConfigurationEncoder {
 public:
  explicit ConfigurationEncoder(const SearchSpace& space);
  std::size_t dims() const { return dims_; }
  /// The inputs that hold a number's unit coordinate (not a choice's one-hot inputs).
  const std::vector<std::size_t>& number_dims() const { return number_dims_; }
  /// Each choice's one-hot inputs (choices of two values or more).
  const std::vector<std::vector<std::size_t>>& choice_dims() const { return choice_dims_; }
  void encode(const Configuration& config, std::vector<double>& out) const;

 private:
  const SearchSpace* space_;
  std::size_t dims_ = 0;
  std::vector<std::size_t> number_dims_;
  std::vector<std::vector<std::size_t>> choice_dims_;
};

struct MobsterObservation {
  TrialId trial;
  double resource;
  double score;  ///< larger is better
  template <class Archive>
  void serialize(Archive& archive) {
    archive(trial, resource, score);
  }
};

class MobsterSuggester final : public Suggester, public ContinuationModel {
 public:
  /// `prior`: the trials of earlier studies of another task (`[sampler] prior`); empty:
  /// none. Start-up trials and a share of the candidates come from where they did best.
  MobsterSuggester(const SearchSpace& space, const MobsterOptions& options, bool maximize,
                   std::uint64_t seed, const std::vector<PastTrial>& prior = {});
  Suggestion suggest(TrialId trial) override;
  void started(TrialId trial, const Configuration& config) override;
  void reported(TrialId trial, double step, double value, const ReportOutcome& outcome) override;
  void ended(TrialId trial, TrialEnd how) override;
  ContinuationModel* continuation_model() override { return this; }
  /// With a prior: what the earlier studies saw of each of the first prior_exact trials,
  /// the earlier best it starts as they were.
  TrustLessons trust_lessons() const override;
  void began_at(TrialId trial, double step, double time_s) override {
    costs_.began_at(trial, step, time_s);
    clock_.saw(time_s);
  }
  void reported_at(TrialId trial, double step, double time_s) override {
    costs_.reported_at(trial, step, time_s);
    clock_.saw(time_s);
  }
  void session_began() override { costs_.session_began(); }
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;
  /// freeze_thaw's question: expected improvement of a start at the first rung (the
  /// proposal suggest() would make, by expected improvement there alone) and of each
  /// paused trial one rung up, each over the incumbent at its resource.
  std::optional<ContinuationScores> score_jobs(
      TrialId next_trial, double first_resource,
      const std::vector<ContinuationQuery>& paused) override;

  /// The model a suggestion would use now (nullopt before it has data): for tests and the
  /// decision-cost bench.
  std::optional<gp::Posterior> model() const;

 private:
  struct TrialState {
    bool started = false, ended = false;
    Configuration config;
    std::vector<double> features;
    std::optional<double> last_step, last_value;
    std::optional<double> observed_at;  // resource of its latest observation
    template <class Archive>
    void serialize(Archive& archive) {
      archive(started, ended, config, features, last_step, last_value, observed_at);
    }
  };

  // How scores were mapped for the model: score = unit * scale.target_units(target).
  struct Standardisation {
    gp::TargetScale scale;
    double unit = 1;  // scores near the largest doubles are divided by it first
    PredictedFinal in_user_units(const gp::Prediction& p, double resource, bool maximize) const;
  };
  // The model a decision uses: conditioned on the chosen observations and on pending
  // trials' fantasies, with each resource's incumbent and the acquisition's rungs.
  struct ModelView {
    std::unique_ptr<gp::Surrogate> posterior;  // the GP's, or a forest's (surrogate)
    std::map<double, double> incumbents;       // best standardised score by resource
    double best_anywhere;
    std::vector<TrialId> centres;      // the best trials at the first resource
    std::map<double, double> weights;  // acquisition rungs
    Standardisation scale;
    double incumbent_at(double resource) const;
  };

  TrialState& state(TrialId trial);
  /// The model's inputs a row: the configuration's, the resource's, and with prior_model
  /// the task's (1 for this study; prior_task.cpp).
  std::size_t model_dims() const { return encoder_.dims() + (prior_task_ ? 2 : 1); }
  /// Appends a row of this study's: `features`, `resource`'s input, and the task's.
  void append_row(std::span<const double> features, double resource,
                  std::vector<double>& out) const;
  /// prior_model: the earlier studies' rows (task input 0, targets standardised apart).
  gp::Data prior_task_rows(const std::vector<PastTrial>& prior) const;
  void observe(TrialId trial, double resource, double value);
  double resource_feature(double resource) const;
  /// Rows (features + resource) and standardised targets of the chosen observations.
  gp::Data data_of(const std::vector<std::size_t>& chosen, Standardisation* scale = nullptr) const;
  /// The kernel's hyperparameters at `observed` observations: fitted on the first m of
  /// them, m the refit ladder's point at `observed`.
  const gp::Hyperparameters& hyperparameters(std::size_t observed);
  /// The rungs the acquisition looks at, with their weights (rung_weighting).
  std::map<double, double> acquisition_rungs(const std::vector<std::size_t>& chosen,
                                             const gp::Data& data, const gp::Surrogate& posterior,
                                             double first) const;
  /// The surrogate model conditioned on `data` for a decision about `trial`: the GP under
  /// the fitted hyperparameters, or a random forest grown from that trial's stream.
  std::unique_ptr<gp::Surrogate> surrogate_of(gp::Data data, TrialId trial, std::size_t observed);
  /// The model for a decision about `trial` (left out of the pending ones), kept until
  /// the suggester sees another start, observation or end.
  const ModelView& view(TrialId trial);
  /// The model of the `chosen` observations (`first`: the lowest resource among them;
  /// `observed`: how many observations the hyperparameters' fit may see), with
  /// `fantasies` pending, for a decision about `trial`.
  ModelView model_view(const std::vector<std::size_t>& chosen, double first, std::size_t observed,
                       const std::vector<TrialId>& fantasies, TrialId trial);
  /// The pending trials a decision about `trial` fantasises: the max_pending started last.
  std::vector<TrialId> fantasised(TrialId trial) const;
  /// `points`: each of `pool` encoded, with `resource`'s input after it (the model's rows).
  void encode_at(const std::vector<Configuration>& pool, double resource,
                 std::vector<double>& points) const;
  /// How a model trial for `trial` picks: the acquisition, or with greedy_share the
  /// posterior mean where the trial's own coin falls under the share.
  Acquisition acquisition_of(TrialId trial) const;
  /// Each candidate's expected improvement (or posterior mean, `kind` = Mean), summed over
  /// `weights`' rungs.
  std::vector<double> acquisition(const ModelView& v, const std::map<double, double>& weights,
                                  const std::vector<Configuration>& pool, Acquisition kind) const;
  /// acquisition = "thompson": one joint draw of the posterior over `pool` at each rung,
  /// summed over `weights`, from the trial's own stream of normals.
  std::vector<double> thompson_draw(TrialId trial, const ModelView& v,
                                    const std::map<double, double>& weights,
                                    const std::vector<Configuration>& pool) const;
  /// The cost exponent now: cost_exponent, cooled over cost_cooling_s where that is set.
  double cost_exponent_now() const;
  Configuration propose(TrialId trial);
  /// A start-up trial's configuration with a prior: the best earlier ones first, then
  /// draws from the prior region (prior_share_now() of them) or from the whole space.
  Configuration prior_start(TrialId trial) const;
  /// prior_check: whether `trial` is one of the start-ups that check the lesson, and if so
  /// whether it was drawn from the prior's region (true) or the whole space (false).
  std::optional<bool> check_draw(TrialId trial) const;
  /// The share of draws the prior makes now: prior_share, or with prior_check and first-
  /// rung results of at least kPriorCheckMin check trials of each half, prior_share x
  /// clamp((A - 1/2) / (kPriorCheckTrusted - 1/2), 0, 1), A the chance that a prior draw
  /// did better there than a draw from the whole space (ties count half). A lesson that
  /// does not hold here (A at 1/2 or below) stops drawing from the prior.
  double prior_share_now() const;
  /// cost_exponent: each candidate's score over its predicted seconds a step to that power.
  void divide_by_step_cost(const std::vector<Configuration>& pool, std::vector<double>& scores);
  /// The candidates a scoring weighs: num_candidates drawn from the space (a share from
  /// the prior's region) and local_candidates perturbed from `best`, from `stream`; with
  /// trust_region, box_candidates around best[0], weighted by the length scales fitted at
  /// `observed` observations (with trust_region_inputs Short, only where one is short).
  std::vector<Configuration> candidates(std::uint64_t stream, const std::vector<TrialId>& best,
                                        std::size_t observed) const;
  /// trust_region: the candidates around `centre` (the best first-rung trial), from `rng`:
  /// `from_prior` from the prior's region, trust_region_share of the rest from the box,
  /// `weights` its sides' shares (box_weights).
  std::vector<Configuration> box_candidates(Xoshiro256& rng, const Configuration& centre,
                                            std::size_t from_prior,
                                            const std::vector<double>& weights) const;
  /// trust_region: each parameter's share of the box's side (gp::box_weights), from the
  /// length scales fitted at `observed` observations.
  std::vector<double> box_weights(std::size_t observed) const;
  /// Whether `trial`, past the start-up, is drawn at random (random_fraction), by its own coin.
  bool explores(TrialId trial) const;
  /// trust_region: feeds an observation to the box, as the first of its trial or not.
  void judge_box(TrialId trial, double resource, double score, bool first);

  /// A launch wave (MobsterOptions::wave): whether the next model trial takes its pick
  /// from its block's shared scoring.
  bool in_wave() const;
  /// The best candidate of `trial`'s block's scoring that the block's earlier trials did
  /// not take (each candidate's score over its predicted step cost, where cost_exponent
  /// is set).
  Configuration wave_pick(TrialId trial);
  // One scoring of a block's candidates: the first `observed` observations' model
  // (observed a point of the refit ladder), the prior's share when it was made.
  struct WaveScoring {
    std::size_t block = 0, observed = 0;
    double share = 0, side = 0;  // side: the trust region's, where there is one
    std::vector<Configuration> pool;
    std::vector<double> scores;
  };
  WaveScoring score_wave(std::size_t block, std::size_t observed, double share);
  static std::size_t ladder_point(std::size_t n, double growth);
  static constexpr std::size_t kFirstFit = 4;  // the refit ladder's first point

  SearchSpace space_;
  MobsterOptions options_;
  bool maximize_;
  std::uint64_t seed_;
  ConfigurationEncoder encoder_;
  StepCostModel costs_;
  std::optional<gp::SobolDesign> sobol_;             // startup_design = "sobol"
  std::optional<gp::PriorRegion> prior_;             // [sampler] prior
  std::optional<gp::TrustRegion> trust_region_;      // trust_region (not archived: rebuilt)
  std::optional<gp::Data> prior_task_;               // prior_model: the earlier rows
  std::vector<TrialState> trials_;                   // by trial id
  std::vector<MobsterObservation> observations_;     // in arrival order
  gp::ObservationChoice chosen_;                     // of observations_, max_observations
  std::set<TrialId> pending_;                        // started, neither judged nor ended
  std::optional<double> first_resource_;             // the lowest rung seen
  std::map<std::size_t, gp::Hyperparameters> fits_;  // by ladder point
  // prior_check: the check trials' first observations, in arrival order.
  struct CheckResult {
    bool from_prior = false;
    double resource = 0, score = 0;  // score: larger is better
    template <class Archive>
    void serialize(Archive& archive) {
      archive(from_prior, resource, score);
    }
  };
  static constexpr std::size_t kPriorCheckPairs = 4, kPriorCheckMin = 3;
  static constexpr double kPriorCheckTrusted = 0.75;
  std::vector<CheckResult> check_results_;
  // The recorded clock's first and latest times seen (cost_cooling_s).
  struct StudyClock {
    std::optional<double> first;
    double latest = 0;
    void saw(double time_s) {
      if (!first) first = latest = time_s;
      latest = std::max(latest, time_s);
    }
    template <class Archive>
    void serialize(Archive& archive) {
      archive(first, latest);
    }
  };
  StudyClock clock_;
  struct CachedView {
    std::uint64_t version;  // of the events the model has seen
    TrialId trial;
    ModelView model;
  };
  std::uint64_t version_ = 0;  // starts, observations and ends seen
  std::optional<CachedView> view_;
  // The last wave's scoring: a cache, made again from the events when next asked.
  std::optional<WaveScoring> wave_;
};

}  // namespace slurmtune::core
