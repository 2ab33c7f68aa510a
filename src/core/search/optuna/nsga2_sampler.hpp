#pragma once
// Optuna 3.1's NSGAIISampler (optuna/samplers/nsgaii): a genetic search for several
// objectives. Each trial belongs to a generation; once a generation has
// population_size completed trials, the elite of it and its parents (non-dominated
// fronts, the last one cut by crowding distance) become the parents of the next. A
// child takes each parameter from one of two parents chosen by binary tournament
// (uniform crossover, with probability crossover_prob; otherwise one parent's values),
// then each parameter is redrawn at random with probability mutation_prob. Parameters
// of the first generation, mutated ones and those not in every completed trial come
// from Optuna's RandomSampler stream. Same seed, same history: Optuna's suggestion.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/objectives/pareto.hpp"
#include "core/search/optuna/optuna_distribution.hpp"
#include "core/search/optuna/sampler_options.hpp"

namespace slurmtune::core::nsga2 {

/// A trial of the history as NSGA-II sees it, in creation order.
struct Individual {
  enum class State { Running, Complete, Pruned, Failed };
  State state = State::Running;
  /// Per parameter, Optuna's internal representation, or nullopt where the trial has none.
  std::vector<std::optional<double>> params;
  std::vector<double> values;  ///< Complete: the objective values as reported
  ParetoPoint point;           ///< Complete: losses (maximised negated) and constraints
  /// Set when the trial was suggested; none for an earlier study's trial (warm start),
  /// which Optuna's add_trials leaves outside every generation.
  std::optional<std::size_t> generation;
  template <class Archive>
  void serialize(Archive& archive) {
    archive(state, params, values, point.loss, point.constraints, generation);
  }
};

class Nsga2Sampler {
 public:
  /// `when[p]`: the conditions of parameter p (define-by-run space). `constrained`:
  /// Optuna's constraints_func is given (constrained domination).
  Nsga2Sampler(std::vector<tpe::Distribution> space, Nsga2Options options, std::uint32_t seed,
               bool constrained, std::vector<std::vector<tpe::Condition>> when = {});

  /// Every parameter of a new trial (internal representation; NaN: inactive), given the
  /// trials so far: `history.back()` is the new trial, whose generation is set here.
  /// `fixed[p]`, where given, is not drawn (an enqueued trial's value).
  std::vector<double> suggest(std::vector<Individual>& history,
                              const std::vector<std::optional<double>>& fixed = {});
  /// The generation a trial suggested now would get (for a resumed study's replay,
  /// which must record each trial's generation as the original did).
  std::size_t next_generation(const std::vector<Individual>& history) const;

  /// Whether the last suggestion inherited values from parents.
  bool last_was_bred() const { return last_was_bred_; }
  std::uint64_t model_words() const { return rng_.words_drawn(); }
  std::uint64_t startup_words() const { return random_rng_.words_drawn(); }
  void restore(std::uint64_t model_words, std::uint64_t startup_words);

  template <class Archive>
  void serialize(Archive& archive) {
    archive(last_was_bred_, rng_, random_rng_);
  }

 private:
  struct Parents {
    std::optional<std::size_t> generation;  // none before the first full generation
    std::vector<std::size_t> population;    // indices into the history
  };
  Parents parent_population(const std::vector<Individual>& history) const;
  std::vector<std::size_t> elite(const std::vector<Individual>& history,
                                 std::vector<std::size_t> population) const;
  bool dominates(const std::vector<Individual>& history, std::size_t a, std::size_t b) const;
  /// sample_relative: the inherited values of the relative space's parameters.
  std::vector<std::optional<double>> breed(const std::vector<Individual>& history,
                                           const std::vector<std::size_t>& parents);
  std::vector<std::size_t> relative_space(const std::vector<Individual>& history) const;
  std::size_t tournament(const std::vector<Individual>& history,
                         const std::vector<std::size_t>& candidates);
  /// One uniform crossover of `space`'s parameters (categorical ones first, as Optuna's
  /// child holds them); nullopt when a value falls outside its domain (Optuna retries).
  std::optional<std::vector<std::pair<std::size_t, double>>> crossover(
      const std::vector<Individual>& history, const std::vector<std::size_t>& space,
      std::size_t first, std::size_t second);

  std::vector<tpe::Distribution> space_;
  Nsga2Options options_;
  bool constrained_;
  std::vector<std::vector<tpe::Condition>> when_;
  std::uint32_t seed_;
  bool last_was_bred_ = false;
  NumpyRandomState rng_;         // NSGAIISampler._rng
  NumpyRandomState random_rng_;  // its RandomSampler's
};

}  // namespace slurmtune::core::nsga2
