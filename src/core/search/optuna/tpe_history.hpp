#pragma once
// The TPE history as `semantics = "binned"` reads it, kept up to date trial by trial so
// that a suggestion costs O(gamma + bins) rather than a pass over every trial: Optuna's
// ranking in a balanced tree, and per parameter and slice of its range, sums of the
// ranked trials' numbers and values. The sums are integers (values in 2^-32 steps of the
// range), so they do not depend on the order the events came in: a resumed study,
// which replays its events, gets the same slices to the bit.
#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/search/optuna/parzen_estimator.hpp"

namespace slurmtune::core::tpe {

/// A trial of the history as TPE sees it, in creation order.
struct TrialRecord {
  enum class State { Running, Complete, Pruned, Failed };
  State state = State::Running;
  /// Per parameter, Optuna's internal representation (numbers; choice indices), or
  /// nullopt where the trial has no value for it (yet).
  std::vector<std::optional<double>> params;
  double value = 0;  ///< Complete: the objective value
  /// Pruned: the intermediate value at the highest step reported, with that step.
  std::optional<std::pair<double, double>> last_intermediate;
  /// Several objectives (MOTPE), Complete: the objective values.
  std::vector<double> values;
  /// With constraints, a finished trial's constraint values (Optuna computes them for
  /// completed and pruned trials); nullopt: none (it ranks as the most violating).
  std::optional<std::vector<double>> constraints;
  template <class Archive>
  void serialize(Archive& archive) {
    archive(state, params, value, last_intermediate, values, constraints);
  }
};

/// Optuna's order of observations, lexicographic in (step key, signed value): completed
/// (-inf, v), pruned (-step, v) or (-step, inf) for NaN, pruned without a report (1, 0),
/// running under constant_liar (inf, inf).
struct Rank {
  double step_key = 0, score = 0;
  bool operator<(const Rank& o) const {
    return step_key != o.step_key ? step_key < o.step_key : score < o.score;
  }
  template <class Archive>
  void serialize(Archive& archive) {
    archive(step_key, score);
  }
};

/// A record's rank, or nullopt where TPE leaves it out (failed; running without
/// constant_liar). `sign` is -1 when maximising.
std::optional<Rank> rank_of(const TrialRecord& t, double sign, bool constant_liar);

class RankedHistory {
 public:
  RankedHistory(std::vector<Distribution> space, std::size_t bins, bool maximize,
                bool constant_liar);

  /// Trial `id`'s record is new or changed (trials between the known ones and `id` are
  /// taken to be default records, running without parameters).
  void update(std::size_t id, const TrialRecord& record);
  std::size_t size() const { return entries_.size(); }
  /// Completed and pruned trials.
  std::size_t finished() const { return finished_; }
  std::size_t ranked() const { return order_.size(); }

  /// The best `n` ranked trials (ties by trial number), in chronological order.
  std::vector<std::size_t> best(std::size_t n) const;
  /// Ranked trials not in `excluded` (sorted), in chronological order: Optuna's
  /// "above" trials when `excluded` is "below". A pass over every trial: for small sets.
  std::vector<std::size_t> ranked_except(const std::vector<std::size_t>& excluded) const;
  /// How many of them have a value for parameter `p`.
  std::size_t count_except(std::size_t p, const std::vector<std::size_t>& excluded) const;
  /// Their values of parameter `p` summarised per slice of the range (per choice for a
  /// categorical), weighted by a ramp over trial numbers: 1/n for trial 0 rising to 1 at
  /// trial size() - 26, 1 from there on (n observations); Optuna ramps the same way over
  /// the observations' order instead, which moves with every trial.
  Slices slices_except(std::size_t p, const std::vector<std::size_t>& excluded) const;

  template <class Archive>
  void serialize(Archive& archive) {
    archive(entries_, order_, sums_, observed_, finished_);
  }

 private:
  /// Integer sums over a slice's observations: trial numbers t, values x in 2^-32 steps of
  /// the range, and t x (which needs 128 bits: 2^31 trials of 2^31 x 2^32).
  __extension__ using Wide = unsigned __int128;
  struct Sums {
    std::uint64_t count = 0, t = 0, x = 0;
    Wide tx = 0;
    template <class Archive>
    void save(Archive& archive) const {
      archive(count, t, x, static_cast<std::uint64_t>(tx >> 64), static_cast<std::uint64_t>(tx));
    }
    template <class Archive>
    void load(Archive& archive) {
      std::uint64_t high = 0, low = 0;
      archive(count, t, x, high, low);
      tx = (static_cast<Wide>(high) << 64) | low;
    }
  };
  struct Cell {
    std::uint32_t slice = 0;
    std::uint64_t x = 0;  // the value in 2^-32 steps of the range
    template <class Archive>
    void serialize(Archive& archive) {
      archive(slice, x);
    }
  };
  struct Entry {
    std::optional<Rank> rank;
    bool finished = false;
    std::vector<std::optional<Cell>> cells;  // per parameter
    template <class Archive>
    void serialize(Archive& archive) {
      archive(rank, finished, cells);
    }
  };
  std::optional<Cell> cell_of(std::size_t p, const std::optional<double>& value) const;
  void account(std::size_t id, const Entry& e, bool add);
  std::size_t slice_count(std::size_t p) const;

  std::vector<Distribution> space_;
  std::vector<std::pair<double, double>> bounds_;  // per parameter, estimator space
  std::size_t bins_;
  double sign_;
  bool constant_liar_;
  std::vector<Entry> entries_;  // by trial number
  std::set<std::pair<Rank, std::size_t>> order_;
  std::vector<std::vector<Sums>> sums_;  // [parameter][slice], ranked trials
  std::vector<std::size_t> observed_;    // [parameter]: ranked trials with a value
  std::size_t finished_ = 0;
};

}  // namespace slurmtune::core::tpe
