#pragma once
// The resolved `[study] sampler` and its `[sampler]` options.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/objectives/objectives.hpp"
#include "core/search/gp/gaussian_process.hpp"
#include "core/search/gp/target_transform.hpp"
#include "core/search/optuna/nsga2_sampler.hpp"
#include "core/search/optuna/tpe_sampler.hpp"
#include "core/search/past_trial.hpp"
#include "core/search/sampler.hpp"

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
/// How a model trial picks among the candidates: the highest expected improvement, or the
/// best posterior mean (greedy; with `random_fraction` it is epsilon-greedy Bayesian
/// optimisation, De Ath et al. 2021).
enum class Acquisition { ExpectedImprovement, Mean };

struct MobsterOptions {
  std::size_t n_startup_trials = 10;      ///< drawn at random before the model is used
  std::size_t num_candidates = 250;       ///< random configurations scored per suggestion
  std::size_t local_candidates = 50;      ///< perturbations of the best ones, scored too
  std::size_t max_observations = 200;     ///< the model conditions on at most this many
  std::size_t max_fit_observations = 64;  ///< hyperparameters are fitted on at most this many
  double random_fraction = 0.1;           ///< share of later configurations drawn at random
  double refit_growth = 1.25;             ///< refit once the observations grew by this factor
  int fit_iterations = 30;                ///< iRprop- steps of a hyperparameter fit
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
  /// A model trial's expected improvement is divided by its predicted seconds a step to
  /// this power (0: step costs play no part). The prediction is the step-cost model's
  /// (step_cost_model.hpp), learnt from the recorded report times; start-up draws and the
  /// random share are not weighted. Only with acquisition = ExpectedImprovement.
  double cost_exponent = 0;
  /// The resource of a full run ([scheduler] max_t, set by the study reader): the
  /// resource enters the model as log(1 + r) / log(1 + max_resource).
  double max_resource = 0;
};

struct SamplerSpec {
  SamplerKind kind = SamplerKind::Random;
  /// `[study] sampler` named the kind; false: the default for the study's shape
  /// (config::parse_study), which a resumed results file replaces by what it recorded.
  bool named = false;
  /// `[[enqueue]]`: the first trials' configurations, in order (trial i runs entry i).
  std::vector<PartialConfiguration> enqueued;
  /// `warm_start`: results files of earlier studies, as written (relative to the study
  /// file's folder), and their trials once store::load_warm_start has read them.
  std::vector<std::string> warm_start_files;
  /// "FILE:LINE:COLUMN" of the `warm_start` key, for the refusals of its files.
  std::string warm_start_where;
  std::vector<PastTrial> warm_start;
  tpe::TpeOptions tpe;        ///< kind == Tpe
  BohbOptions bohb;           ///< kind == Bohb
  MobsterOptions mobster;     ///< kind == Mobster
  nsga2::Nsga2Options nsga2;  ///< kind == Nsga2
  /// Several objectives (two or more; empty for one) and constraints, as `[study]` gives
  /// them, and the columns of a report's metric row (StudySpec::metrics) where a sampler
  /// finds their values. Set by the study reader.
  std::vector<StudyObjective> objectives;
  std::vector<Constraint> constraints;
  std::vector<std::string> metric_columns;
};

}  // namespace slurmtune::core
