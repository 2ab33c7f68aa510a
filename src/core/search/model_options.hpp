#pragma once
// The options of BOHB's and MOBSTER's models, as plain data: what the study file sets
// ([sampler], sampler_spec.hpp), and what the models in core/search/bohb and
// core/search/gp read, without the models' headers.
#include <cstddef>
#include <optional>

namespace slurmtune::core::gp {

/// Where the length scales' log-normal prior lies. `Fixed`: median 0.5 (half an input's
/// range), sd 1.5, whatever the number of inputs. `DimensionScaled`: median
/// exp(sqrt(2) + log(dims) / 2), sd sqrt(3) (Hvarfner et al. 2024, "Vanilla Bayesian
/// optimization performs great in high dimensions"; BoTorch's default since 0.12):
/// distances in the unit cube grow as sqrt(dims), and a fixed prior makes a model of many
/// inputs so rough that it explains each observation alone and predicts little between them.
/// `Sparse`: each input's inverse squared length scale half-Cauchy with scale 0.1, the
/// shrinkage of SAAS (Eriksson and Jankowiak 2021, "High-dimensional Bayesian optimization
/// with sparse axis-aligned subspaces") at its global scale's prior scale, fitted to its mode
/// rather than sampled: an input is irrelevant (length scale about 3.2, three ranges)
/// until the observations show that it matters, and each e-fold shorter costs about 2 in
/// log density, so tens of observations in 20 inputs shorten only the few that do.
enum class LengthScalePrior { Fixed, DimensionScaled, Sparse };

/// How the GP sees its targets (target_transform.hpp).
enum class TargetTransform { Standardise, Copula };

}  // namespace slurmtune::core::gp

namespace slurmtune::core {

/// BOHB's configuration generator (Falkner et al. 2018; HpBandSter, which Ray Tune's
/// TuneBOHB wraps), with its defaults.
struct BohbOptions {
  double top_n_percent = 15;           ///< share of a budget's observations that are "good"
  std::size_t num_samples = 64;        ///< candidates drawn around good points per suggestion
  double random_fraction = 1.0 / 3.0;  ///< share of suggestions drawn at random
  double bandwidth_factor = 3;         ///< widens the good density's kernels when sampling
  double min_bandwidth = 1e-3;         ///< floor of every kernel bandwidth
  /// Observations a budget needs before a model is fitted on it; nullopt: dimensions + 1.
  std::optional<std::size_t> min_points_in_model;
};

/// MOBSTER's searcher (Klein et al. 2020): a Gaussian process over (configuration,
/// resource) proposing each new trial by expected improvement at the first resource it
/// will reach (mobster_suggester.hpp).
/// Where MOBSTER's acquisition looks: expected improvement at the first rung (the
/// paper's choice), or a weighted sum over the rungs, weighted by how well each ranks
/// configurations as the highest well-observed rung does (Hyper-Tune; rung_weighting.hpp).
enum class RungWeighting { FirstRung, HyperTune };
/// Where start-up configurations come from: independent draws, or one scrambled Sobol
/// sequence per study (gp/startup_design.hpp).
enum class StartupDesign { Random, Sobol };
/// How a model trial picks among the candidates: the highest expected improvement, the
/// best posterior mean (greedy; with `random_fraction` it is epsilon-greedy Bayesian
/// optimisation, De Ath et al. 2021), or the best of one joint draw of the posterior over
/// them (Thompson sampling; asynchronous and batch in Kandasamy et al. 2018: each free
/// worker's draw differs, so a wave of them spreads without fantasies of the pending ones).
enum class Acquisition { ExpectedImprovement, Mean, Thompson };

/// The model MOBSTER's acquisition asks (gp/surrogate.hpp): the Gaussian process, or a
/// random forest in SMAC's style (forest/random_forest.hpp).
enum class Surrogate { GaussianProcess, RandomForest };

/// Which numbers the trust region confines (gp/trust_region.hpp): all of them, or only the
/// short ones (a fitted length scale under half the numbers' geometric mean), every other
/// parameter drawn from its whole domain.
enum class TrustRegionInputs { All, Short };

/// The prior's start-up draws when `prior_startup` is not given: at least this many (at 8
/// workers the whole start-up of n_startup_trials, 10), and kPriorStartupPastExact past the
/// exact ones, so that a wrong lesson costs less of a wide first wave (issue #64, 2026-12-04).
inline constexpr std::size_t kDefaultPriorStartup = 10;
inline constexpr std::size_t kPriorStartupPastExact = 5;
/// `prior_exact` when not given: the larger of this and half the trials the study runs at
/// once (resolve_prior_start), so that a wide first wave starts as much of the earlier good
/// set as Optuna's enqueue does while 8 workers keep most of theirs for the whole space
/// (issue #64, the screening of 2026-12-04 after the second claim pairs).
inline constexpr std::size_t kDefaultPriorExact = 5;

struct MobsterOptions {
  std::size_t n_startup_trials = 10;      ///< drawn at random before the model is used
  std::size_t num_candidates = 250;       ///< random configurations scored per suggestion
  std::size_t local_candidates = 50;      ///< perturbations of the best ones, scored too
  std::size_t max_observations = 200;     ///< the model conditions on at most this many
  std::size_t max_fit_observations = 64;  ///< hyperparameters are fitted on at most this many
  /// A suggestion fantasises at most this many pending trials, the latest started (the
  /// model's size, and so a suggestion's cost, is bounded however many workers run).
  std::size_t max_pending = 64;
  /// A launch wave: while more trials await their first result than max_pending (a
  /// study of thousands of workers), each block of `wave` consecutive trial ids shares
  /// one scoring of candidates, by a model of the observations alone, and each model
  /// trial takes the best its block's earlier trials left: a suggestion costs about
  /// 1/wave of a scoring. 0 or 1: every trial scores candidates of its own.
  std::size_t wave = 64;
  double random_fraction = 0.1;  ///< share of later configurations drawn at random
  double refit_growth = 1.25;    ///< refit once the observations grew by this factor
  int fit_iterations = 30;       ///< iRprop- steps of a hyperparameter fit
  RungWeighting rung_weighting = RungWeighting::FirstRung;
  /// Where the kernel's length scales are expected: fixed, or growing with the inputs.
  gp::LengthScalePrior length_scale_prior = gp::LengthScalePrior::Fixed;
  /// Each number's input warped by a Kumaraswamy CDF fitted with the kernel (Snoek et al.
  /// 2014): a response that changes fast near one end of a range is modelled stationary.
  bool input_warping = false;
  /// A choice's one-hot inputs share one length scale: any two of its values are equally
  /// far apart (an exchangeable kernel per choice), one parameter to learn, not one per value.
  bool exchangeable_choices = false;
  /// The targets as the GP sees them: standardised, or first mapped to normal scores of
  /// their ranks (a Gaussian copula), robust to heavy tails (target_transform.hpp).
  gp::TargetTransform target_transform = gp::TargetTransform::Standardise;
  StartupDesign startup_design = StartupDesign::Random;
  Acquisition acquisition = Acquisition::ExpectedImprovement;
  /// With acquisition = ExpectedImprovement: the share of model trials that take the best
  /// posterior mean instead, each trial's kind drawn by a coin of its own stream (as the
  /// random share is), so that replay and resume draw the same. A hedge between exploring
  /// and refining that needs no knowledge of the table (issue #64, item 4). A greedy trial's
  /// pending trials are fantasised as acquisition = Mean's are, and no cost divides its mean;
  /// a launch wave's shared scoring stays expected improvement.
  double greedy_share = 0;
  Surrogate surrogate = Surrogate::GaussianProcess;
  /// A model trial's expected improvement is divided by its predicted seconds a step to
  /// this power (0: step costs play no part). The prediction is the step-cost model's
  /// (step_cost_model.hpp), learnt from the recorded report times; start-up draws and the
  /// random share are not weighted. Only with acquisition = ExpectedImprovement.
  double cost_exponent = 0;
  /// Cost cooling (Lee et al. 2020, "Cost-aware Bayesian optimization", CArBO): the cost
  /// exponent falls linearly from `cost_exponent` to 0 over this many seconds of the study's
  /// recorded clock, from its first trial's start (0: no cooling). Cheap configurations
  /// first, while the model knows little; expected improvement alone later.
  double cost_cooling_s = 0;
  /// A trust region around the incumbent (TuRBO-1, gp/trust_region.hpp): a model trial's
  /// candidates all come from a box around the best first-rung trial, whose side grows
  /// after a run of successes and shrinks after a run of failures. Start-up trials and the
  /// random share still draw from the whole space.
  bool trust_region = false;
  /// With trust_region: the share of the candidates (after a prior's) drawn from the box;
  /// the rest from the whole space.
  double trust_region_share = 1.0;
  /// With trust_region: Short confines only the short numbers, and where none is short a
  /// model trial's candidates are those without the box (issue #64, item 4).
  TrustRegionInputs trust_region_inputs = TrustRegionInputs::All;
  /// With `[sampler] prior`: the share of start-up trials (after the best earlier ones)
  /// and of candidates drawn from the prior region (gp/prior_region.hpp); the rest from
  /// the whole space.
  double prior_share = 0.75;
  /// With `[sampler] prior`: how many start-up trials take the earlier studies' best
  /// configurations as they were, best first (at most as many as the prior's good set).
  /// Not given: max(kDefaultPriorExact, trials at once / 2), resolved when the study starts
  /// (resolve_prior_start; 2 before 2026-12-04, then 5; results files record it).
  std::size_t prior_exact = kDefaultPriorExact;
  /// With `[sampler] prior`: how many start-up trials the prior draws (the exact ones
  /// included); later start-ups, of a first wave wider than this before the model has its
  /// first observations, are uniform. nullopt: all of them, as in results files written
  /// before 2026-12-04. Not given: max(kDefaultPriorStartup, prior_exact +
  /// kPriorStartupPastExact), resolved with prior_exact.
  std::optional<std::size_t> prior_startup;
  /// With `[sampler] prior`: check the lesson. The first 2 x kPriorCheckPairs start-ups
  /// after the exact ones alternate between the prior's region and the whole space, and
  /// once both halves have first-rung results the prior's share (of later start-ups and
  /// of candidates) is prior_share times how far the prior's half beats the other
  /// (gp/mobster_suggester.hpp, prior_share_now). false: prior_share throughout.
  bool prior_check = false;
  /// With `[sampler] prior`: the earlier studies' judged observations enter the Gaussian
  /// process as another task (prior_task.cpp): one more input, 0 for an earlier trial's
  /// rows and 1 for this study's, whose length scale the fit learns with the others. A
  /// long one says the earlier landscape carries over and the model's first picks follow
  /// it; a short one makes the tasks nearly independent, as without the rows. Each task's
  /// targets are standardised apart (another size has other values everywhere). At most
  /// max_fit_observations of the earlier rows, chosen as a model's own (observation_choice).
  bool prior_model = false;
  /// The resource of a full run ([scheduler] max_t, set by the study reader): the
  /// resource enters the model as log(1 + r) / log(1 + max_resource).
  double max_resource = 0;
};

}  // namespace slurmtune::core
