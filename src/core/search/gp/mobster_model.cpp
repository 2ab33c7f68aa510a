// MOBSTER's model: the Gaussian process (or forest) a decision asks, conditioned on the
// chosen observations and the pending trials' fantasies; and the launch waves' shared
// scorings (MobsterOptions::wave), which ask a model of the observations alone.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>

#include "core/random.hpp"
#include "core/search/gp/mobster_suggester.hpp"
#include "core/search/gp/observation_choice.hpp"
#include "core/search/gp/rung_weighting.hpp"

namespace slurmtune::core {

namespace {

constexpr std::uint64_t kForestStream = 0x666f72657374ULL;  // "forest"
constexpr std::uint64_t kWaveStream = 0x77617665ULL;        // "wave"
constexpr std::size_t kLocalCentres = 5;  // best configurations perturbed for candidates
constexpr std::size_t kMinRanked = 3;     // configurations a rung needs to be ranked against

std::vector<gp::RankedScore> ranked_scores(std::span<const MobsterObservation> observations) {
  std::vector<gp::RankedScore> out;
  out.reserve(observations.size());
  for (const auto& o : observations)
    out.push_back({o.resource, o.score});
  return out;
}

}  // namespace

std::size_t MobsterSuggester::ladder_point(std::size_t n, double growth) {
  return gp::refit_point(n, growth, kFirstFit);
}

gp::Data MobsterSuggester::data_of(const std::vector<std::size_t>& chosen,
                                   Standardisation* scale) const {
  gp::Data data;
  data.dims = model_dims();
  // A diverged trial's NaN or infinite metric counts as the worst finite value seen.
  double worst = INFINITY;
  for (const auto i : chosen)
    if (std::isfinite(observations_[i].score)) worst = std::min(worst, observations_[i].score);
  if (!std::isfinite(worst)) worst = 0;
  for (const auto i : chosen) {
    const auto& o = observations_[i];
    append_row(trials_[o.trial].features, o.resource, data.inputs);
    data.targets.push_back(std::isfinite(o.score) ? o.score : worst);
  }
  // Values near the largest doubles (a trial may report 1e300) are scaled down first, so
  // that their squares do not overflow; the model's targets do not depend on the scale.
  double magnitude = 0;
  for (const double y : data.targets)
    magnitude = std::max(magnitude, std::fabs(y));
  const double unit = magnitude > 1e100 ? magnitude : 1.0;
  for (double& y : data.targets)
    y /= unit;
  gp::ScaledTargets scaled = gp::scale_targets(options_.target_transform, data.targets);
  data.targets = std::move(scaled.values);
  if (scale) *scale = Standardisation{std::move(scaled.scale), unit};
  // prior_model: the earlier task's rows after this study's (whose indices callers use).
  if (prior_task_) {
    data.inputs.insert(data.inputs.end(), prior_task_->inputs.begin(), prior_task_->inputs.end());
    data.targets.insert(data.targets.end(), prior_task_->targets.begin(),
                        prior_task_->targets.end());
  }
  return data;
}

const gp::Hyperparameters& MobsterSuggester::hyperparameters(std::size_t observed) {
  const std::size_t point = ladder_point(observed, options_.refit_growth);
  auto it = fits_.find(point);
  if (it == fits_.end()) {
    const gp::Data data =
        data_of(gp::choose_observations(ranked_scores(std::span(observations_).first(point)), point,
                                        options_.max_fit_observations));
    // The resource's input (the last) is not warped: it is log(1 + r) already.
    const gp::FitOptions fitting{
        options_.fit_iterations, options_.length_scale_prior,
        options_.input_warping ? encoder_.number_dims() : std::vector<std::size_t>{},
        options_.exchangeable_choices ? encoder_.choice_dims()
                                      : std::vector<std::vector<std::size_t>>{}};
    it = fits_
             .emplace(
                 point,
                 gp::fit(data, gp::default_hyperparameters(data.dims, options_.length_scale_prior),
                         fitting))
             .first;
  }
  return it->second;
}

std::optional<gp::Posterior> MobsterSuggester::model() const {
  if (observations_.size() < kFirstFit) return std::nullopt;
  auto data = data_of(chosen_.chosen());
  const auto point = ladder_point(observations_.size(), options_.refit_growth);
  const auto it = fits_.find(point);
  auto h = it != fits_.end() ? it->second
                             : gp::default_hyperparameters(data.dims, options_.length_scale_prior);
  return gp::Posterior(std::move(data), std::move(h));
}

std::map<double, double> MobsterSuggester::acquisition_rungs(const std::vector<std::size_t>& chosen,
                                                             const gp::Data& data,
                                                             const gp::Surrogate& posterior,
                                                             double first) const {
  if (options_.rung_weighting == RungWeighting::FirstRung) return {{first, 1.0}};
  std::map<double, std::vector<std::size_t>> rows;  // data rows by resource
  for (std::size_t k = 0; k < chosen.size(); ++k)
    rows[observations_[chosen[k]].resource].push_back(k);
  // The reference: the highest rung with enough configurations to rank.
  auto reference = rows.rbegin();
  while (reference != rows.rend() && reference->second.size() < kMinRanked)
    ++reference;
  if (reference == rows.rend() || reference->first == first) return {{first, 1.0}};
  const auto& reference_rows = reference->second;
  std::vector<double> observed;
  std::map<TrialId, double> at_reference;
  for (const auto k : reference_rows) {
    observed.push_back(data.targets[k]);
    at_reference[observations_[chosen[k]].trial] = data.targets[k];
  }
  std::map<double, std::optional<double>> agreement;
  // The reference rung itself: its leave-one-out means (its own fit would rank trivially).
  agreement[reference->first] =
      concordance(posterior.leave_one_out_means(reference_rows), observed);
  // A lower rung: its observations of the configurations also seen at the reference.
  for (const auto& [resource, ks] : rows) {
    if (resource >= reference->first) break;
    std::vector<double> here, there;
    for (const auto k : ks)
      if (const auto it = at_reference.find(observations_[chosen[k]].trial);
          it != at_reference.end()) {
        here.push_back(data.targets[k]);
        there.push_back(it->second);
      }
    agreement[resource] =
        here.size() >= kMinRanked ? std::optional(concordance(here, there)) : std::nullopt;
  }
  return rung_weights(agreement, first);
}

std::vector<TrialId> MobsterSuggester::fantasised(TrialId trial) const {
  // The latest started: the ones proposed from a model most like this one, and so the
  // most likely to be proposed again. Those started long ago were proposed from fewer
  // observations, and most of them are judged soon.
  std::vector<TrialId> latest;
  for (auto it = pending_.rbegin(); it != pending_.rend() && latest.size() < options_.max_pending;
       ++it)
    if (*it != trial) latest.push_back(*it);
  std::reverse(latest.begin(), latest.end());
  return latest;
}

std::unique_ptr<gp::Surrogate> MobsterSuggester::surrogate_of(gp::Data data, TrialId trial,
                                                              std::size_t observed) {
  if (options_.surrogate == Surrogate::RandomForest)
    // A forest of the decision's trial's own stream: replay grows the same one from the
    // same data (the events' count would not do: replay sees them in another order).
    return gp::forest_surrogate(std::move(data), {}, derive_seed(seed_, kForestStream, trial));
  return gp::gaussian_surrogate(std::move(data), hyperparameters(observed));
}

const MobsterSuggester::ModelView& MobsterSuggester::view(TrialId trial) {
  // freeze_thaw scores a start, then suggest() proposes it, with nothing seen between:
  // one model serves both.
  if (view_ && view_->version == version_ && view_->trial == trial) return view_->model;
  view_.emplace(CachedView{version_, trial,
                           model_view(chosen_.chosen(), *first_resource_, observations_.size(),
                                      fantasised(trial), trial)});
  return view_->model;
}

MobsterSuggester::ModelView MobsterSuggester::model_view(const std::vector<std::size_t>& chosen,
                                                         double first, std::size_t observed,
                                                         const std::vector<TrialId>& fantasies,
                                                         TrialId trial) {
  Standardisation scale;
  gp::Data data = data_of(chosen, &scale);

  // The incumbent at each resource (the best standardised score there), and the best
  // trials at the first one (perturbation centres).
  ModelView v{surrogate_of(data, trial, observed), {}, 0, {}, {}, scale};
  std::vector<std::pair<double, TrialId>> at_first;
  for (std::size_t k = 0; k < chosen.size(); ++k) {
    const auto& o = observations_[chosen[k]];
    const auto [it, fresh] = v.incumbents.emplace(o.resource, data.targets[k]);
    if (!fresh) it->second = std::max(it->second, data.targets[k]);
    if (o.resource == first) at_first.emplace_back(data.targets[k], o.trial);
  }
  // This study's rows only (prior_model's earlier ones follow them).
  const auto own_end = data.targets.begin() + static_cast<std::ptrdiff_t>(chosen.size());
  v.best_anywhere = *std::max_element(data.targets.begin(), own_end);
  std::stable_sort(at_first.begin(), at_first.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; k < at_first.size() && k < kLocalCentres; ++k)
    v.centres.push_back(at_first[k].second);
  v.weights = acquisition_rungs(chosen, data, *v.posterior, first);
  // Pending trials land, in the model's belief, on its mean at the first resource. A mean
  // acquisition would not move for that, and every free worker would get the same pick:
  // under it they land on the observations' mean instead (Ginsbourger et al.'s constant
  // liar), below the model's belief around a promising pending trial.
  std::vector<double> pending;
  for (const TrialId t : fantasies)
    append_row(trials_[t].features, first, pending);
  // Thompson draws spread a wave of free workers by their randomness alone.
  const Acquisition kind = acquisition_of(trial);
  if (!pending.empty() && kind != Acquisition::Thompson) {
    if (kind == Acquisition::Mean) {
      const double lie =
          std::accumulate(data.targets.begin(), own_end, 0.0) / static_cast<double>(chosen.size());
      data.targets.resize(data.targets.size() + pending.size() / data.dims, lie);
    } else {
      for (const auto& p : v.posterior->predict(pending))
        data.targets.push_back(p.mean);
    }
    data.inputs.insert(data.inputs.end(), pending.begin(), pending.end());
    v.posterior = surrogate_of(std::move(data), trial, observed);
  }
  return v;
}

double MobsterSuggester::ModelView::incumbent_at(double resource) const {
  const auto it = incumbents.find(resource);
  return it != incumbents.end() ? it->second : best_anywhere;
}

// --- launch waves --------------------------------------------------------------------

bool MobsterSuggester::in_wave() const {
  return options_.wave > 1 && pending_.size() > options_.max_pending &&
         options_.surrogate == Surrogate::GaussianProcess &&
         options_.acquisition != Acquisition::Thompson;
}

Configuration MobsterSuggester::wave_pick(TrialId trial) {
  // Every input of the scoring is a function of the events seen so far: the block (the
  // trial's id), the refit ladder's point at the observations' count (their first so
  // many in arrival order), the prior's share, the trust region's side. A resumed study
  // rebuilds the same one.
  const std::size_t block = trial / options_.wave;
  const std::size_t observed = ladder_point(observations_.size(), options_.refit_growth);
  const double share = prior_share_now();
  const double side = trust_region_ ? trust_region_->side() : 0;
  if (!wave_ || wave_->block != block || wave_->observed != observed || wave_->share != share ||
      wave_->side != side)
    wave_ = score_wave(block, observed, share);
  std::vector<double> scores = wave_->scores;
  if (cost_exponent_now() > 0) divide_by_step_cost(wave_->pool, scores);
  // Taken: the configurations of the block's trials started before this one.
  for (TrialId t = block * options_.wave; t < trial && t < trials_.size(); ++t) {
    if (!trials_[t].started) continue;
    for (std::size_t c = 0; c < wave_->pool.size(); ++c)
      if (wave_->pool[c] == trials_[t].config) scores[c] = -std::numeric_limits<double>::infinity();
  }
  const auto best = std::max_element(scores.begin(), scores.end());
  if (*best == -std::numeric_limits<double>::infinity()) return propose(trial);
  return wave_->pool[static_cast<std::size_t>(best - scores.begin())];
}

MobsterSuggester::WaveScoring MobsterSuggester::score_wave(std::size_t block, std::size_t observed,
                                                           double share) {
  const auto prefix = std::span(observations_).first(observed);
  const std::vector<std::size_t> chosen =
      gp::choose_observations(ranked_scores(prefix), observed, options_.max_observations);
  double first = prefix.front().resource;
  for (const auto& o : prefix)
    first = std::min(first, o.resource);
  // No fantasies: the wave's picks spread by taking the best that its earlier trials left.
  const ModelView v = model_view(chosen, first, observed, {}, block * options_.wave);
  WaveScoring out{block,
                  observed,
                  share,
                  trust_region_ ? trust_region_->side() : 0,
                  candidates(derive_seed(seed_, kWaveStream, block), v.centres, observed),
                  {}};
  out.scores = acquisition(v, v.weights, out.pool, options_.acquisition);
  return out;
}

}  // namespace slurmtune::core
