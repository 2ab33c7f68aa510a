#pragma once
// Optuna 3.1's TPESampler for one objective, parameter by parameter (its default,
// independent sampling): the first n_startup_trials configurations come from Optuna's
// RandomSampler stream, later ones from the Parzen estimators of the best gamma(n)
// observations ("below") and the rest ("above"), choosing among n_ei_candidates draws of
// "below" the one with the largest log l(x) - log g(x). Completed trials rank by value,
// pruned ones by (highest step first) their value there, running ones (constant_liar)
// last. Same seed, same history: the same suggestion as Optuna's.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/search/optuna/optuna_distribution.hpp"
#include "core/search/optuna/sampler_options.hpp"
#include "core/search/optuna/tpe_history.hpp"

namespace slurmtune::core::tpe {

/// Optuna's default_gamma: min(ceil(0.1 n), 25), with the fraction and cap as options.
std::size_t default_gamma(std::size_t n, double fraction = 0.1, std::size_t cap = 25);

class TpeSampler {
 public:
  /// `when[p]`: the conditions of parameter p, all of which must hold (a define-by-run
  /// space: p is suggested only then, and only trials that have p inform its estimators).
  /// `name_order`: the parameters sorted by name (Optuna samples a group's parameters in
  /// that order); empty: their order.
  TpeSampler(std::vector<Distribution> space, TpeOptions options, std::uint32_t seed, bool maximize,
             std::vector<std::vector<Condition>> when = {},
             std::vector<std::size_t> name_order = {});

  /// Every parameter of a new trial (internal representation), given the trials so far:
  /// `history.back()` is the new trial itself, running, without parameters yet; its
  /// params are filled as they are suggested. With `multivariate`, once a trial has
  /// finished and n_startup_trials have, all parameters come from one joint estimator
  /// (Optuna's sample_relative); otherwise each on its own, in space order.
  /// `fixed[p]`, where given, is parameter p's value, not drawn (Optuna's fixed
  /// parameters of an enqueued trial); empty: none is. An inactive parameter's value is
  /// NaN (and absent from the trial's params).
  std::vector<double> suggest(std::vector<TrialRecord>& history,
                              const std::vector<std::optional<double>>& fixed = {});
  /// `history[trial]` changed since suggest() last saw it. Binned semantics keeps its
  /// index up to date with this (suggest() only adds trials it has not seen); Optuna's
  /// reads the whole history each time and needs no notice.
  void changed(const std::vector<TrialRecord>& history, std::size_t trial);

  const std::vector<Distribution>& space() const { return space_; }
  /// The last suggestion came from the startup (random) stream.
  bool last_was_startup() const { return last_was_startup_; }
  /// Words drawn from the model's stream and from the startup stream since seeding.
  std::uint64_t model_words() const { return rng_.words_drawn(); }
  std::uint64_t startup_words() const { return random_rng_.words_drawn(); }
  /// Reseeds both streams and advances them to the given positions.
  void restore(std::uint64_t model_words, std::uint64_t startup_words);

  /// What it has learnt and its streams (a snapshot); the index exists or not as the
  /// options say, so only its contents are written.
  template <class Archive>
  void serialize(Archive& archive) {
    archive(groups_, last_was_startup_, rng_, random_rng_);
    if (index_) archive(*index_);
  }

 private:
  /// The history ranked as Optuna ranks it, split into "below" (the best gamma(n)) and
  /// "above", each in chronological order (indices into `trials`).
  struct Split {
    std::vector<const TrialRecord*> trials;  // the ranked ones (failed ones left out)
    std::vector<std::size_t> below, above;
    /// Several objectives: the weight of each of `below`, in its order; empty otherwise.
    std::vector<double> below_weights;
    /// Observations of `params` ([parameter][observation]) of the trials `ids`.
    std::vector<std::vector<double>> columns(const std::vector<std::size_t>& params,
                                             const std::vector<std::size_t>& ids) const;
    /// below_weights of the below trials `columns(params, below)` keeps.
    std::vector<double> masked_below_weights(const std::vector<std::size_t>& params) const;
  };
  Split split(const std::vector<TrialRecord>& history, std::size_t finished) const;
  /// Optuna's _split_observation_pairs with constraints or several objectives.
  Split split_observations(const std::vector<TrialRecord>& history) const;
  bool multi_objective() const { return options_.objectives_maximize.size() > 1; }
  /// Trials that count as observations for n_startup_trials and gamma: completed and
  /// pruned ones; completed ones only with several objectives.
  std::size_t count_observed(const std::vector<TrialRecord>& history) const;
  /// Whether parameter p exists given the values chosen before it (NaN: inactive).
  bool active(std::size_t p, const std::vector<double>& chosen) const;
  /// multivariate: Optuna's IntersectionSearchSpace(include_pruned=True), the parameters
  /// every completed or pruned trial has, in space order; empty before one has finished.
  std::vector<std::size_t> relative_space(const std::vector<TrialRecord>& history) const;
  /// The joint draws of sample_relative into `relative` (multivariate, by group or over
  /// the intersection).
  void sample_relative(const std::vector<TrialRecord>& history, const Split& observed,
                       std::size_t finished, std::vector<std::optional<double>>& relative);
  /// Whether parameter p has one value only (Optuna's distribution.single(): never drawn).
  bool single(std::size_t p) const;

 public:
  /// Optuna's _GroupDecomposedSearchSpace.calculate at a trial's start: every completed or
  /// pruned trial's parameter set split into the groups, in trial order. Persistent, as
  /// Optuna's: suggest() calls it, and so must a resumed study for every trial it replays
  /// (TpeSuggester::started), so that the groups come in the same order.
  void update_groups(const std::vector<TrialRecord>& history);

 private:
  /// Binned semantics: each parameter from the index, its "above" density binned once it
  /// outgrows the bins.
  std::vector<double> suggest_binned(std::vector<TrialRecord>& history,
                                     const std::vector<std::optional<double>>& fixed);
  double sample_random(std::size_t p);
  /// The parameters `params` drawn from the estimators of their observations below and
  /// above ([k][observation], k indexing `params`).
  std::vector<double> sample_model(const std::vector<std::size_t>& params, const Split& observed);
  /// The best of n_ei_candidates draws from `below` by log l(x) - log g(x).
  std::vector<double> choose(const ParzenEstimator& below, const ParzenEstimator& above);

  std::vector<Distribution> space_;
  std::vector<std::vector<Condition>> when_;
  std::vector<std::size_t> name_order_;
  std::vector<std::vector<std::size_t>> groups_;  // group decomposition, in Optuna's order
  TpeOptions options_;
  bool maximize_;
  std::uint32_t seed_;
  bool last_was_startup_ = false;
  NumpyRandomState rng_;                // TPESampler._rng
  NumpyRandomState random_rng_;         // its RandomSampler's
  std::optional<RankedHistory> index_;  // binned and auto semantics only
};

}  // namespace slurmtune::core::tpe
