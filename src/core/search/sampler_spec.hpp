#pragma once
// The resolved `[study] sampler` and its `[sampler]` options.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/objectives/objectives.hpp"
#include "core/search/model_options.hpp"
#include "core/search/optuna/sampler_options.hpp"
#include "core/search/past_trial.hpp"
#include "core/search/sampler.hpp"

namespace slurmtune::core {

struct SamplerSpec {
  SamplerKind kind = SamplerKind::Random;
  /// `[study] sampler` named the kind; false: the default for the study's shape
  /// (config::parse_study), which a resumed results file replaces by what it recorded.
  bool named = false;
  /// `[sampler] semantics` was given (tpe); false: the default, "auto", which a resumed
  /// results file replaces by what it recorded (older ones: "optuna").
  bool tpe_semantics_named = false;
  /// `[sampler] wave` was given (mobster). A results file written before launch waves has
  /// no `wave` in its resolved study and ran without them (store::StudyReader reads it as
  /// 0); a study file that gives none resumes with what its results file recorded.
  bool mobster_wave_named = false;
  /// `[sampler] prior_exact` and `prior_startup` were given (mobster with a prior). Their
  /// defaults changed on 2026-12-04 (2 and all start-ups before); a study file that gives
  /// neither resumes with what its results file recorded (store::StudyReader reads a
  /// resolved study without `prior_startup` as all start-ups).
  bool prior_exact_named = false;
  bool prior_startup_named = false;
  /// Those of the two not given have their values for the trials this study runs at once
  /// (resolve_prior_start), or a resumed results file's (store::with_recorded_defaults).
  bool prior_start_resolved = false;
  /// `[sampler] prior_check` was given. On by default with a prior since 2026-12-04 (off
  /// before, and then absent from the resolved study): a study file that does not give it
  /// resumes with what its results file recorded.
  bool prior_check_named = false;
  /// `suggest_ahead`: each suggestion made right after the previous trial starts, on a
  /// thread of its own in `run` (SuggestionsAhead); model-based samplers only.
  bool suggest_ahead = false;
  /// `[[enqueue]]`: the first trials' configurations, in order (trial i runs entry i).
  std::vector<PartialConfiguration> enqueued;
  /// `warm_start`: results files of earlier studies, as written (relative to the study
  /// file's folder), and their trials once store::load_warm_start has read them.
  std::vector<std::string> warm_start_files;
  /// "FILE:LINE:COLUMN" of the `warm_start` key, for the refusals of its files.
  std::string warm_start_where;
  std::vector<PastTrial> warm_start;
  /// `prior` (mobster): results files of earlier studies of another task whose best
  /// configurations say where to search first (gp/prior_region.hpp), as written, where
  /// the key is, and their trials once store::load_warm_start has read them.
  std::vector<std::string> prior_files;
  std::string prior_where;
  std::vector<PastTrial> prior;
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

/// The defaults of `prior_exact` and `prior_startup` (mobster with a prior) not given in the
/// study file, for a study that runs `trials_at_once` trials at once: the earlier best
/// max(kDefaultPriorExact, trials_at_once / 2) as they were, and the prior's start-up draws
/// max(kDefaultPriorStartup, prior_exact + kPriorStartupPastExact). Once only: a spec already
/// resolved (or resumed with what its results file recorded) keeps its values, since the
/// suggestions a results file replays were made with them.
void resolve_prior_start(SamplerSpec& spec, std::size_t trials_at_once);

/// Whether the study starts from earlier studies: a MOBSTER sampler with a `prior`.
bool has_prior(const SamplerSpec& spec);

/// Whether resolve_prior_start would change `spec` with the trials run at once: a prior
/// whose prior_exact the study file leaves to its default, not yet resolved.
bool prior_start_follows_trials_at_once(const SamplerSpec& spec);

/// The prior's start-up draws when `prior_startup` is not given, for `prior_exact`.
std::size_t default_prior_startup(std::size_t prior_exact);

}  // namespace slurmtune::core
