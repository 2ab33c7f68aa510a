#include "core/search/optuna/tpe_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace slurmtune::core::tpe {
namespace {}  // namespace

std::size_t default_gamma(std::size_t n, double fraction, std::size_t cap) {
  return std::min<std::size_t>(
      static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(n))), cap);
}

TpeSampler::TpeSampler(std::vector<Distribution> space, TpeOptions options, std::uint32_t seed,
                       bool maximize, std::vector<std::vector<Condition>> when,
                       std::vector<std::size_t> name_order)
    : space_(std::move(space)),
      when_(std::move(when)),
      name_order_(std::move(name_order)),
      options_(std::move(options)),
      maximize_(maximize),
      seed_(seed),
      rng_(seed),
      random_rng_(seed) {
  if (options_.bins > 0 && !options_.estimator.multivariate)
    index_.emplace(space_, options_.bins, maximize, options_.constant_liar);
  if (name_order_.empty())
    for (std::size_t p = 0; p < space_.size(); ++p)
      name_order_.push_back(p);
}

void TpeSampler::changed(const std::vector<TrialRecord>& history, std::size_t trial) {
  if (index_) index_->update(trial, history.at(trial));
}

void TpeSampler::restore(std::uint64_t model_words, std::uint64_t startup_words) {
  rng_ = NumpyRandomState(seed_);
  rng_.discard(model_words);
  random_rng_ = NumpyRandomState(seed_);
  random_rng_.discard(startup_words);
}

std::vector<double> TpeSampler::suggest(std::vector<TrialRecord>& history,
                                        const std::vector<std::optional<double>>& fixed) {
  const auto given = [&fixed](std::size_t p) {
    return p < fixed.size() ? fixed[p] : std::optional<double>();
  };
  auto& trial = history.back();
  trial.params.clear();
  if (index_)  // trials it has not seen yet, all but the new one
    for (std::size_t i = index_->size(); i + 1 < history.size(); ++i)
      index_->update(i, history[i]);
  // Binned once the index holds binned_from finished trials (auto); Optuna's exact rules
  // before, which count the history as Optuna does.
  const bool binned = index_ && index_->finished() >= options_.binned_from;
  const std::size_t finished = binned ? index_->finished() : count_observed(history);
  std::vector<double> values;
  last_was_startup_ = finished < options_.n_startup_trials;
  // Nothing to sample (every parameter a constant): Optuna draws nothing either.
  if (space_.empty()) return values;
  if (options_.group) update_groups(history);
  // One value only: Optuna takes it without asking a sampler (a categorical's index 0).
  const auto only_value = [this](std::size_t p) { return single_value(space_[p]); };
  if (last_was_startup_) {
    for (std::size_t p = 0; p < space_.size(); ++p) {
      if (!active(p, values)) {
        values.push_back(std::nan(""));
        trial.params.emplace_back();
        continue;
      }
      values.push_back(given(p) ? *given(p) : single(p) ? only_value(p) : sample_random(p));
      trial.params.emplace_back(values.back());
    }
    return values;
  }
  if (binned) return suggest_binned(history, fixed);
  // The ranking is the same for every parameter of this trial: split the history once
  // (Optuna ranks every trial, whichever parameters it has, and masks per parameter).
  const Split observed = split(history, finished);
  // Optuna's sample_relative at the trial's start; an enqueued trial's fixed values then
  // take the place of the drawn ones.
  std::vector<std::optional<double>> relative(space_.size());
  if (options_.estimator.multivariate) sample_relative(history, observed, finished, relative);
  for (std::size_t p = 0; p < space_.size(); ++p) {
    if (!active(p, values)) {  // not suggested in this trial: no draw, no value
      values.push_back(std::nan(""));
      trial.params.emplace_back();
      continue;
    }
    if (given(p)) {
      values.push_back(*given(p));  // Optuna does not ask its sampler for a fixed one
    } else if (single(p)) {
      values.push_back(only_value(p));
    } else if (relative[p]) {
      values.push_back(*relative[p]);
    } else {
      const std::vector<std::size_t> one{p};
      values.push_back(sample_model(one, observed).front());
    }
    trial.params.emplace_back(values.back());  // as Optuna's trial holds it meanwhile
  }
  return values;
}

bool TpeSampler::active(std::size_t p, const std::vector<double>& chosen) const {
  return p >= when_.size() || conditions_hold(when_[p], chosen);
}

bool TpeSampler::single(std::size_t p) const {
  return is_single(space_[p]);
}

void TpeSampler::update_groups(const std::vector<TrialRecord>& history) {
  for (const auto& t : history) {
    if (t.state != TrialRecord::State::Complete && t.state != TrialRecord::State::Pruned) continue;
    // _SearchSpaceGroup.add_distributions: each group splits into its part the trial has
    // and the rest; what no group held becomes a group of its own.
    std::vector<bool> rest(space_.size(), false);
    for (std::size_t p = 0; p < space_.size() && p < t.params.size(); ++p)
      rest[p] = t.params[p].has_value();
    std::vector<std::vector<std::size_t>> next;
    for (const auto& group : groups_) {
      std::vector<std::size_t> both, only_group;
      for (const auto p : group)
        (rest[p] ? both : only_group).push_back(p);
      for (const auto p : group)
        rest[p] = false;
      if (!both.empty()) next.push_back(std::move(both));
      if (!only_group.empty()) next.push_back(std::move(only_group));
    }
    std::vector<std::size_t> fresh;
    for (std::size_t p = 0; p < space_.size(); ++p)
      if (rest[p]) fresh.push_back(p);
    if (!fresh.empty()) next.push_back(std::move(fresh));
    groups_ = std::move(next);
  }
}

void TpeSampler::sample_relative(const std::vector<TrialRecord>& history, const Split& observed,
                                 std::size_t finished,
                                 std::vector<std::optional<double>>& relative) {
  // _sample_relative of one space: nothing before n_startup_trials have finished, else
  // one joint draw, its observations masked by the space's first parameter.
  const auto draw = [&](const std::vector<std::size_t>& space) {
    if (space.empty() || finished < options_.n_startup_trials) return;
    const auto drawn = sample_model(space, observed);
    for (std::size_t i = 0; i < space.size(); ++i)
      relative[space[i]] = drawn[i];
  };
  if (!options_.group) {
    std::vector<std::size_t> joint;
    for (const auto p : relative_space(history))
      if (!single(p)) joint.push_back(p);
    draw(joint);
    return;
  }
  for (const auto& group : groups_) {  // each group's parameters sorted by name
    std::vector<std::size_t> space;
    for (const auto p : name_order_)
      if (std::find(group.begin(), group.end(), p) != group.end() && !single(p)) space.push_back(p);
    draw(space);
  }
}

std::vector<std::size_t> TpeSampler::relative_space(const std::vector<TrialRecord>& history) const {
  std::vector<bool> in_all(space_.size(), true);
  bool any = false;
  for (const auto& t : history) {
    if (t.state != TrialRecord::State::Complete && t.state != TrialRecord::State::Pruned) continue;
    any = true;
    for (std::size_t p = 0; p < space_.size(); ++p)
      if (p >= t.params.size() || !t.params[p]) in_all[p] = false;
  }
  std::vector<std::size_t> out;
  for (std::size_t p = 0; any && p < space_.size(); ++p)
    if (in_all[p]) out.push_back(p);
  return out;
}

double TpeSampler::sample_random(std::size_t p) {
  return tpe::sample_random(space_[p], random_rng_);
}

TpeSampler::Split TpeSampler::split(const std::vector<TrialRecord>& history,
                                    std::size_t finished) const {
  if (multi_objective() || options_.constrained) return split_observations(history);
  const double sign = maximize_ ? -1.0 : 1.0;
  std::vector<Rank> ranks;
  Split result;
  ranks.reserve(history.size());
  result.trials.reserve(history.size());
  for (const auto& t : history) {
    const auto rank = rank_of(t, sign, options_.constant_liar);
    if (!rank) continue;
    ranks.push_back(*rank);
    result.trials.push_back(&t);
  }
  // _split_observation_pairs: a stable sort by rank, the first gamma(n) are "below";
  // both sides keep chronological order. Only the first gamma(n) need ordering: they
  // are selected by (rank, position), the order a stable sort gives, and the rest stay
  // where they are.
  std::vector<std::size_t> order(ranks.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  const std::size_t n_below =
      std::min(default_gamma(finished, options_.gamma_fraction, options_.gamma_max), order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n_below),
                    order.end(), [&](std::size_t a, std::size_t b) {
                      if (ranks[a] < ranks[b]) return true;
                      if (ranks[b] < ranks[a]) return false;
                      return a < b;
                    });
  std::vector<bool> is_below(ranks.size(), false);
  for (std::size_t i = 0; i < n_below; ++i)
    is_below[order[i]] = true;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    (is_below[i] ? result.below : result.above).push_back(i);
  return result;
}

std::vector<std::vector<double>> TpeSampler::Split::columns(
    const std::vector<std::size_t>& params, const std::vector<std::size_t>& ids) const {
  // A trial without a value for the first of `params` (the new one, still being
  // suggested, or one the parameter did not exist in) drops out, as Optuna's mask does:
  // it masks by the first parameter only.
  std::vector<std::vector<double>> observed(params.size());
  for (auto& column : observed)
    column.reserve(ids.size());
  for (const auto i : ids) {
    const auto& values = trials[i]->params;
    if (params.front() >= values.size() || !values[params.front()]) continue;
    for (std::size_t k = 0; k < params.size(); ++k)
      observed[k].push_back(params[k] < values.size() ? values[params[k]].value_or(std::nan(""))
                                                      : std::nan(""));
  }
  return observed;
}

std::vector<double> TpeSampler::sample_model(const std::vector<std::size_t>& params,
                                             const Split& observed) {
  std::vector<Distribution> sub;
  for (const auto p : params)
    sub.push_back(space_[p]);
  // Several objectives: "below" weighted by hypervolume contribution (MOTPE).
  std::optional<std::vector<double>> weights;
  if (multi_objective()) weights = observed.masked_below_weights(params);
  const ParzenEstimator below(observed.columns(params, observed.below), sub, options_.estimator,
                              weights);
  const ParzenEstimator above(observed.columns(params, observed.above), sub, options_.estimator);
  return choose(below, above);
}

std::vector<double> TpeSampler::Split::masked_below_weights(
    const std::vector<std::size_t>& params) const {
  std::vector<double> out;
  for (std::size_t k = 0; k < below.size(); ++k) {
    const auto& values = trials[below[k]]->params;
    if (params.front() < values.size() && values[params.front()]) out.push_back(below_weights[k]);
  }
  return out;
}

std::vector<double> TpeSampler::choose(const ParzenEstimator& below, const ParzenEstimator& above) {
  const auto samples = below.sample(rng_, options_.n_ei_candidates);
  const auto log_l = below.log_pdf(samples);
  const auto log_g = above.log_pdf(samples);
  // np.argmax of log_l - log_g: the first maximum, or the first NaN.
  std::size_t best = 0;
  for (std::size_t i = 0; i < log_l.size(); ++i) {
    const double score = log_l[i] - log_g[i];
    const double best_score = log_l[best] - log_g[best];
    if (std::isnan(best_score)) break;
    if (std::isnan(score) || score > best_score) best = i;
  }
  std::vector<double> chosen;
  for (const auto& column : samples)
    chosen.push_back(column[best]);
  return chosen;
}

std::vector<double> TpeSampler::suggest_binned(std::vector<TrialRecord>& history,
                                               const std::vector<std::optional<double>>& fixed) {
  const RankedHistory& index = *index_;
  const std::size_t n_below = std::min(
      default_gamma(index.finished(), options_.gamma_fraction, options_.gamma_max), index.ranked());
  const auto below_ids = index.best(n_below);
  const auto column = [&](std::size_t p, const std::vector<std::size_t>& ids) {
    std::vector<std::vector<double>> values(1);
    for (const auto id : ids)
      if (p < history[id].params.size() && history[id].params[p])
        values[0].push_back(*history[id].params[p]);
    return values;
  };
  std::vector<double> values;
  auto& trial = history.back();
  for (std::size_t p = 0; p < space_.size(); ++p) {
    if (p < fixed.size() && fixed[p]) {  // not drawn, as in Optuna's semantics
      values.push_back(*fixed[p]);
      trial.params.push_back(values.back());
      continue;
    }
    const std::vector<Distribution> sub{space_[p]};
    const ParzenEstimator below(column(p, below_ids), sub, options_.estimator);
    if (index.count_except(p, below_ids) > options_.bins) {
      const ParzenEstimator above(space_[p], index.slices_except(p, below_ids), options_.estimator);
      values.push_back(choose(below, above).front());
    } else {
      const ParzenEstimator above(column(p, index.ranked_except(below_ids)), sub,
                                  options_.estimator);
      values.push_back(choose(below, above).front());
    }
    trial.params.push_back(values.back());  // as Optuna's trial holds it meanwhile
  }
  return values;
}

}  // namespace slurmtune::core::tpe
