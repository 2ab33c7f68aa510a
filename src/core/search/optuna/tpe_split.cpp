// TPE's split of the history into "below" and "above" with constraints or several
// objectives: Optuna 3.1's _get_observation_pairs, _split_observation_pairs and
// _calculate_weights_below_for_multi_objective (samplers/_tpe/sampler.py).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/objectives/pareto.hpp"
#include "core/search/optuna/hypervolume.hpp"
#include "core/search/optuna/tpe_sampler.hpp"

namespace slurmtune::core::tpe {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = 1e-12;

// An observation's score: (step key, signed values), ranked lexicographically.
struct Score {
  double step_key = 0;
  std::vector<double> values;
};

struct Indices {
  std::vector<std::size_t> below, above;
};

std::vector<std::size_t> sorted(std::vector<std::size_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// One objective: a stable sort by (step key, value); both sides in chronological order.
Indices split_one(const std::vector<Score>& scores, std::size_t n_below) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (scores[a].step_key != scores[b].step_key) return scores[a].step_key < scores[b].step_key;
    return scores[a].values[0] < scores[b].values[0];
  });
  const auto cut = order.begin() + static_cast<std::ptrdiff_t>(n_below);
  return {sorted({order.begin(), cut}), sorted({cut, order.end()})};
}

// Several objectives: whole non-domination ranks while they fit, the rank that does not
// by greedy hypervolume subset selection. "below" in that order; "above" sorted.
Indices split_many(const std::vector<Score>& scores, std::size_t n_below) {
  Points points;
  for (const auto& s : scores)
    points.push_back(s.values);
  const auto ranks = nondomination_ranks(points);
  const auto of_rank = [&](int rank) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < ranks.size(); ++i)
      if (ranks[i] == rank) out.push_back(i);
    return out;
  };
  Indices out;
  int rank = 0;
  while (out.below.size() < n_below && out.below.size() + of_rank(rank).size() <= n_below) {
    const auto members = of_rank(rank++);
    out.below.insert(out.below.end(), members.begin(), members.end());
  }
  if (const std::size_t rest = n_below - out.below.size(); rest > 0) {
    const auto members = of_rank(rank);
    Points rank_points;
    for (const auto i : members)
      rank_points.push_back(points[i]);
    const auto chosen = solve_hssp(rank_points, members, rest, reference_point(rank_points));
    out.below.insert(out.below.end(), chosen.begin(), chosen.end());
  }
  const auto in_below = sorted(out.below);
  for (std::size_t i = 0; i < scores.size(); ++i)
    if (!std::binary_search(in_below.begin(), in_below.end(), i)) out.above.push_back(i);
  return out;
}

Indices split_indices(const std::vector<Score>& scores, std::size_t n_below,
                      const std::vector<double>* violations) {
  if (!violations)
    return scores.empty() || scores.front().values.size() <= 1 ? split_one(scores, n_below)
                                                               : split_many(scores, n_below);
  // Feasible trials first: by violation (stable) when fewer than n_below + 1 are
  // feasible, else the feasible ones split by their scores and the others above.
  const auto& v = *violations;
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  Indices out;
  if (n_below >= order.size() || v[order[n_below]] > 0) {
    const auto cut = order.begin() + static_cast<std::ptrdiff_t>(std::min(n_below, order.size()));
    out = {{order.begin(), cut}, {cut, order.end()}};
  } else {
    std::vector<std::size_t> feasible, infeasible;
    std::vector<Score> feasible_scores;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] == 0) {
        feasible.push_back(i);
        feasible_scores.push_back(scores[i]);
      } else if (v[i] > 0) {
        infeasible.push_back(i);
      }
    }
    const Indices inner = split_indices(feasible_scores, n_below, nullptr);
    for (const auto i : inner.below)
      out.below.push_back(feasible[i]);
    for (const auto i : inner.above)
      out.above.push_back(feasible[i]);
    out.above.insert(out.above.end(), infeasible.begin(), infeasible.end());
  }
  return {sorted(out.below), sorted(out.above)};
}

}  // namespace

std::size_t TpeSampler::count_observed(const std::vector<TrialRecord>& history) const {
  std::size_t n = 0;
  for (const auto& t : history)
    n += t.state == TrialRecord::State::Complete ||
         (t.state == TrialRecord::State::Pruned && !multi_objective());
  return n;
}

TpeSampler::Split TpeSampler::split_observations(const std::vector<TrialRecord>& history) const {
  const double sign = maximize_ ? -1.0 : 1.0;
  Split result;
  std::vector<Score> scores;
  std::vector<double> violations;
  for (const auto& t : history) {
    Score score;
    if (multi_objective()) {  // MOTPE leaves pruned and running trials out
      if (t.state != TrialRecord::State::Complete) continue;
      score.step_key = -kInf;
      for (std::size_t k = 0; k < t.values.size(); ++k)
        score.values.push_back(options_.objectives_maximize[k] ? -t.values[k] : t.values[k]);
    } else {
      const auto rank = rank_of(t, sign, options_.constant_liar);
      if (!rank) continue;
      score = {rank->step_key, {rank->score}};
    }
    scores.push_back(std::move(score));
    result.trials.push_back(&t);
    if (options_.constrained)
      violations.push_back(t.state == TrialRecord::State::Running || !t.constraints
                               ? kInf
                               : total_violation(*t.constraints));
  }
  std::size_t n = 0;  // running trials (constant liar) do not count
  for (const auto& s : scores)
    n += s.step_key < kInf;
  const std::size_t n_below = default_gamma(n, options_.gamma_fraction, options_.gamma_max);
  const Indices split =
      split_indices(scores, n_below, options_.constrained ? &violations : nullptr);
  result.below = split.below;
  result.above = split.above;
  if (!multi_objective()) return result;
  // "below" weighted by each feasible trial's hypervolume contribution, EPS otherwise.
  Points feasible;
  std::vector<bool> is_feasible;
  for (const auto i : result.below) {
    is_feasible.push_back(!options_.constrained || violations[i] == 0);
    if (is_feasible.back()) feasible.push_back(scores[i].values);
  }
  const auto weights = contribution_weights(feasible);
  std::size_t next = 0;
  for (const bool f : is_feasible)
    result.below_weights.push_back(f ? weights[next++] : kEps);
  return result;
}

}  // namespace slurmtune::core::tpe
