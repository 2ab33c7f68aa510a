#include "core/search/gp/mobster_suggester.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/search/gp/observation_choice.hpp"
#include "core/search/gp/rung_weighting.hpp"
#include "core/search/gp/standard_normal.hpp"
#include "core/search/gp/unit_draws.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {
namespace {

using gp::folded_into_unit;
using gp::random_configuration;
using gp::sobol_configuration;
using gp::standard_normal;
using gp::value_at;

constexpr std::uint64_t kCandidateStream = 0x6d6f6273746572ULL;    // "mobster"
constexpr std::uint64_t kExplorationStream = 0x6578706c6f7265ULL;  // "explore"
constexpr std::uint64_t kThompsonStream = 0x74686f6d70736f6eULL;   // "thompson"
constexpr std::uint64_t kGreedyStream = 0x677265656479ULL;         // "greedy"
constexpr double kLocalSpread = 0.1;  // the perturbation of local candidates, in unit coordinates
constexpr double kChoiceResample = 0.25;  // a perturbed choice is redrawn this often
constexpr double kAbsentInput = -1.0;     // the model's input for an absent number

double expected_improvement(const gp::Prediction& p, double incumbent) {
  const double sd = std::sqrt(p.variance);
  const double z = (p.mean - incumbent) / sd;
  return sd * (z * gp::normal_cdf(z) + gp::normal_pdf(z));
}

// A trial's own coin on its own stream, under `share`: which trials explore at random, and
// which pick greedily. Each kind of draw has a stream, so adding one moves no other.
bool coin_under(std::uint64_t seed, std::uint64_t stream, TrialId trial, double share) {
  Xoshiro256 coin(derive_seed(seed, stream, trial));
  return coin.uniform01() < share;
}

std::size_t sampled_parameters(const SearchSpace& space) {
  return static_cast<std::size_t>(
      std::count_if(space.parameters().begin(), space.parameters().end(),
                    [](const auto& p) { return p.domain.is_sampled(); }));
}

}  // namespace

// --- ConfigurationEncoder ----------------------------------------------------------

ConfigurationEncoder::ConfigurationEncoder(const SearchSpace& space) : space_(&space) {
  for (const auto& p : space.parameters()) {
    if (p.domain.kind == DomainKind::Grid)
      throw InputError("sampler \"mobster\" chooses every value itself, but parameter '" + p.name +
                       "' is a grid axis; make it a choice");
    if (p.domain.kind == DomainKind::Choice) {
      std::vector<std::size_t> group(p.domain.values.size());
      std::iota(group.begin(), group.end(), dims_);
      if (group.size() >= 2) choice_dims_.push_back(std::move(group));
      dims_ += p.domain.values.size();
    } else if (p.domain.kind != DomainKind::Constant) {
      number_dims_.push_back(dims_);
      dims_ += 1;
    }
  }
}

void ConfigurationEncoder::encode(const Configuration& config, std::vector<double>& out) const {
  const auto& params = space_->parameters();
  for (std::size_t j = 0; j < params.size(); ++j) {
    const Domain& d = params[j].domain;
    if (!config.is_active(j)) {
      // An absent parameter imputed with a constant no present value takes (as studied by Lévesque
      // et al. 2017): a number at -1, below the unit interval; a choice as no choice at all.
      if (d.kind == DomainKind::Choice)
        out.insert(out.end(), d.values.size(), 0.0);
      else if (d.kind != DomainKind::Constant)
        out.push_back(kAbsentInput);
    } else if (d.kind == DomainKind::Choice) {
      const std::size_t chosen = d.index_of(config.values[j]);
      for (std::size_t c = 0; c < d.values.size(); ++c)
        out.push_back(c == chosen ? 1.0 : 0.0);
    } else if (d.kind != DomainKind::Constant) {
      out.push_back(d.to_unit(config.values[j]));
    }
  }
}

// --- MobsterSuggester --------------------------------------------------------------

MobsterSuggester::MobsterSuggester(const SearchSpace& space, const MobsterOptions& options,
                                   bool maximize, std::uint64_t seed,
                                   const std::vector<PastTrial>& prior)
    : space_(space),
      options_(options),
      maximize_(maximize),
      seed_(seed),
      encoder_(space_),
      costs_(encoder_.dims(), options.max_observations, options.refit_growth,
             options.fit_iterations),
      chosen_(options.max_observations) {
  if (options_.startup_design == StartupDesign::Sobol)
    sobol_.emplace(sampled_parameters(space_), seed_);
  if (!prior.empty()) prior_.emplace(space_, prior, maximize_);
  if (options_.trust_region) trust_region_.emplace(sampled_parameters(space_));
  if (!prior.empty() && options_.prior_model) prior_task_ = prior_task_rows(prior);
}

MobsterSuggester::TrialState& MobsterSuggester::state(TrialId trial) {
  if (trial >= trials_.size()) trials_.resize(trial + 1);
  return trials_[trial];
}

double MobsterSuggester::resource_feature(double resource) const {
  const double r = std::max(resource, 0.0);
  return options_.max_resource > 0 ? std::log1p(r) / std::log1p(options_.max_resource)
                                   : std::log1p(r);
}

Suggestion MobsterSuggester::suggest(TrialId trial) {
  const bool startup = trial < options_.n_startup_trials || observations_.size() < kFirstFit;
  const bool explore = !startup && explores(trial);
  Suggestion s;
  if (startup && prior_) {
    s.config = prior_start(trial);
    s.info.origin = SuggestionOrigin::Startup;
  } else if (startup && sobol_) {
    s.config = sobol_configuration(space_, *sobol_, trial);
    s.info.origin = SuggestionOrigin::Startup;
  } else if (startup || explore) {
    Xoshiro256 rng(derive_seed(seed_, kCandidateStream, trial));
    s.config = random_configuration(space_, rng);
    s.info.origin = startup ? SuggestionOrigin::Startup : SuggestionOrigin::Random;
  } else {
    s.config = in_wave() ? wave_pick(trial) : propose(trial);
    s.info.origin = SuggestionOrigin::Model;
  }
  started(trial, s.config);
  return s;
}

bool MobsterSuggester::explores(TrialId trial) const {
  return coin_under(seed_, kExplorationStream, trial, options_.random_fraction);
}

Acquisition MobsterSuggester::acquisition_of(TrialId trial) const {
  return options_.greedy_share > 0 && coin_under(seed_, kGreedyStream, trial, options_.greedy_share)
             ? Acquisition::Mean
             : options_.acquisition;
}

void MobsterSuggester::judge_box(TrialId trial, double resource, double score, bool first) {
  // A trial the box proposed: past the start-up and not a random draw. (One suggested
  // before the model's first fit was a start-up draw too, and counts: the events do not
  // say which it was, and only the first few trials can be.)
  const bool proposed = trial >= options_.n_startup_trials && !explores(trial);
  trust_region_->observed(resource, score, first && proposed);
}

void MobsterSuggester::started(TrialId trial, const Configuration& config) {
  ++version_;
  auto& t = state(trial);
  t.started = true;
  t.config = config;
  t.features.clear();
  encoder_.encode(config, t.features);
  costs_.configured(trial, t.features);
  if (!t.ended && !t.observed_at) pending_.insert(trial);
}

void MobsterSuggester::observe(TrialId trial, double resource, double value) {
  ++version_;
  observations_.push_back({trial, resource, maximize_ ? value : -value});
  if (trust_region_)
    judge_box(trial, resource, observations_.back().score, !trials_[trial].observed_at);
  if (prior_ && !trials_[trial].observed_at)
    if (const auto check = check_draw(trial))
      check_results_.push_back({*check, resource, observations_.back().score});
  chosen_.add({resource, observations_.back().score});
  trials_[trial].observed_at = resource;
  pending_.erase(trial);
  if (!first_resource_ || resource < *first_resource_) first_resource_ = resource;
}

void MobsterSuggester::reported(TrialId trial, double step, double value,
                                const ReportOutcome& outcome) {
  if (trial >= trials_.size() || !trials_[trial].started) return;
  auto& t = trials_[trial];
  t.last_step = step;
  t.last_value = value;
  // Judged at a rung: an observation at that rung's resource, whatever the verdict.
  if (outcome.milestone) observe(trial, *outcome.milestone, value);
}

void MobsterSuggester::ended(TrialId trial, TrialEnd how) {
  if (trial >= trials_.size() || !trials_[trial].started) return;
  auto& t = trials_[trial];
  t.ended = true;
  pending_.erase(trial);
  ++version_;
  // A completed trial is an observation at its full resource (no rung there).
  if (how == TrialEnd::Completed && t.last_step && t.observed_at != t.last_step)
    observe(trial, *t.last_step, *t.last_value);
}

std::vector<Configuration> MobsterSuggester::candidates(std::uint64_t stream,
                                                        const std::vector<TrialId>& best,
                                                        std::size_t observed) const {
  Xoshiro256 rng(stream);
  const auto& params = space_.parameters();
  std::vector<Configuration> out;
  out.reserve(options_.num_candidates + options_.local_candidates);
  // With a prior, prior_share of them from its region (the expected improvement still
  // chooses, among them and the rest).
  const auto from_prior =
      prior_ ? static_cast<std::size_t>(prior_share_now() *
                                        static_cast<double>(options_.num_candidates))
             : 0;
  if (trust_region_ && !best.empty()) {
    const auto weights = box_weights(observed);
    // Along the short inputs only: where the model has found none, no box.
    if (options_.trust_region_inputs == TrustRegionInputs::All || gp::any_short(weights))
      return box_candidates(rng, trials_[best.front()].config, from_prior, weights);
  }
  for (std::size_t c = 0; c < options_.num_candidates; ++c)
    out.push_back(c < from_prior ? prior_->sample(rng) : random_configuration(space_, rng));
  for (std::size_t c = 0; c < options_.local_candidates && !best.empty(); ++c) {
    Configuration config = trials_[best[c % best.size()]].config;
    for (std::size_t j = 0; j < params.size(); ++j) {
      const Domain& d = params[j].domain;
      if (!config.is_active(j) && d.is_sampled()) {
        // Absent in the centre: nothing to perturb, a value of its own in case a perturbed
        // choice brings it into existence.
        config.values[j] = value_at(d, rng.uniform01());
      } else if (d.kind == DomainKind::Choice) {
        if (rng.uniform01() < kChoiceResample) config.values[j] = value_at(d, rng.uniform01());
      } else if (d.is_sampled()) {
        config.values[j] = value_at(
            d, folded_into_unit(d.to_unit(config.values[j]) + kLocalSpread * standard_normal(rng)));
      }
    }
    space_.resolve_activity(config);
    out.push_back(std::move(config));
  }
  return out;
}

void MobsterSuggester::append_row(std::span<const double> features, double resource,
                                  std::vector<double>& out) const {
  out.insert(out.end(), features.begin(), features.end());
  out.push_back(resource_feature(resource));
  if (prior_task_) out.push_back(1.0);
}

void MobsterSuggester::encode_at(const std::vector<Configuration>& pool, double resource,
                                 std::vector<double>& points) const {
  points.clear();
  points.reserve(pool.size() * model_dims());
  std::vector<double> features;
  for (const auto& config : pool) {
    features.clear();
    encoder_.encode(config, features);
    append_row(features, resource, points);
  }
}

std::vector<Configuration> MobsterSuggester::box_candidates(
    Xoshiro256& rng, const Configuration& centre, std::size_t from_prior,
    const std::vector<double>& weights) const {
  // After the prior's share, trust_region_share of the rest from the box, the others from
  // the whole space; no fixed-spread perturbations (the box is the local search).
  const std::size_t all = options_.num_candidates + options_.local_candidates;
  const auto from_box = static_cast<std::size_t>(
      std::lround(options_.trust_region_share * static_cast<double>(all - from_prior)));
  const double side = trust_region_->side();
  const bool short_only = options_.trust_region_inputs == TrustRegionInputs::Short;
  std::vector<Configuration> out;
  out.reserve(all);
  for (std::size_t c = 0; c < all; ++c) {
    if (c < from_prior)
      out.push_back(prior_->sample(rng));
    else if (c < from_prior + from_box)
      out.push_back(short_only
                        ? gp::draw_along_short(space_, centre, weights, side, rng)
                        : gp::draw_in_box(space_, centre, weights, side, kChoiceResample, rng));
    else
      out.push_back(random_configuration(space_, rng));
  }
  return out;
}

std::vector<double> MobsterSuggester::box_weights(std::size_t observed) const {
  // The GP's length scales at the fit `observed` observations use; the forest has none.
  const auto fit = fits_.find(ladder_point(observed, options_.refit_growth));
  const bool scaled = options_.surrogate == Surrogate::GaussianProcess && fit != fits_.end();
  return gp::box_weights(space_, scaled ? fit->second.length_scales : std::vector<double>{},
                         encoder_.number_dims());
}

std::vector<double> MobsterSuggester::acquisition(const ModelView& v,
                                                  const std::map<double, double>& weights,
                                                  const std::vector<Configuration>& pool,
                                                  Acquisition kind) const {
  std::vector<double> acquisition(pool.size(), 0.0), points;
  for (const auto& [resource, weight] : weights) {
    encode_at(pool, resource, points);
    const double incumbent = v.incumbent_at(resource);
    const auto predictions = v.posterior->predict(points);
    for (std::size_t c = 0; c < predictions.size(); ++c)
      acquisition[c] +=
          weight * (kind == Acquisition::Mean ? predictions[c].mean
                                              : expected_improvement(predictions[c], incumbent));
  }
  return acquisition;
}

std::vector<double> MobsterSuggester::thompson_draw(TrialId trial, const ModelView& v,
                                                    const std::map<double, double>& weights,
                                                    const std::vector<Configuration>& pool) const {
  // The same normals at every rung: the rungs' functions are strongly correlated, and
  // independent draws averaged by the weights would explore less than one draw does.
  Xoshiro256 rng(derive_seed(seed_, kThompsonStream, trial));
  std::vector<double> normals(pool.size());
  for (double& e : normals)
    e = standard_normal(rng);
  std::vector<double> scores(pool.size(), 0.0), points;
  for (const auto& [resource, weight] : weights) {
    encode_at(pool, resource, points);
    const auto draw = v.posterior->joint_sample(points, normals);
    for (std::size_t c = 0; c < draw.size(); ++c)
      scores[c] += weight * draw[c];
  }
  return scores;
}

double MobsterSuggester::cost_exponent_now() const {
  if (options_.cost_cooling_s <= 0 || !clock_.first) return options_.cost_exponent;
  const double spent = (clock_.latest - *clock_.first) / options_.cost_cooling_s;
  return options_.cost_exponent * std::clamp(1.0 - spent, 0.0, 1.0);
}

void MobsterSuggester::divide_by_step_cost(const std::vector<Configuration>& pool,
                                           std::vector<double>& scores) {
  std::vector<double> points;
  points.reserve(pool.size() * encoder_.dims());
  for (const auto& config : pool)
    encoder_.encode(config, points);
  // Before two trials are measured nothing is known of costs: expected improvement alone.
  const auto seconds = costs_.predicted(points);
  if (!seconds) return;
  const double exponent = cost_exponent_now();
  for (std::size_t c = 0; c < scores.size(); ++c)
    scores[c] /= std::pow((*seconds)[c], exponent);
}

Configuration MobsterSuggester::propose(TrialId trial) {
  // Expected improvement at each weighted rung, over that rung's incumbent (or the
  // posterior mean there, with acquisition = "mean", or a draw of it, "thompson"), per
  // predicted second a step raised to cost_exponent (cooled) where that is set.
  const ModelView& v = view(trial);
  const std::vector<Configuration> pool =
      candidates(derive_seed(seed_, kCandidateStream, trial), v.centres, observations_.size());
  const Acquisition kind = acquisition_of(trial);
  std::vector<double> scores = kind == Acquisition::Thompson
                                   ? thompson_draw(trial, v, v.weights, pool)
                                   : acquisition(v, v.weights, pool, kind);
  // A posterior mean may be negative: a cost divides expected improvement only.
  if (kind == Acquisition::ExpectedImprovement && cost_exponent_now() > 0)
    divide_by_step_cost(pool, scores);
  return pool[static_cast<std::size_t>(std::max_element(scores.begin(), scores.end()) -
                                       scores.begin())];
}

// --- the model as freeze_thaw's judge ------------------------------------------------

std::optional<ContinuationScores> MobsterSuggester::score_jobs(
    TrialId next_trial, double first_resource, const std::vector<ContinuationQuery>& paused) {
  if (observations_.size() < kFirstFit) return std::nullopt;
  const ModelView& v = view(next_trial);
  // A start: the configuration propose() would choose by expected improvement at the
  // first rung (DyHPO's one step ahead), from the next trial's candidate stream.
  const std::vector<Configuration> pool =
      candidates(derive_seed(seed_, kCandidateStream, next_trial), v.centres, observations_.size());
  const std::vector<double> scores =
      acquisition(v, {{first_resource, 1.0}}, pool, acquisition_of(next_trial));
  const auto best =
      static_cast<std::size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
  std::vector<double> points, start;
  encoder_.encode(pool[best], start);
  append_row(start, first_resource, points);
  // A resumption: its own configuration one rung up, over that rung's incumbent.
  for (const auto& q : paused) {
    if (q.trial >= trials_.size() || !trials_[q.trial].started)
      throw UsageError("mobster: freeze_thaw asked about trial " + std::to_string(q.trial) +
                       ", which the sampler never saw start");
    append_row(trials_[q.trial].features, q.resource, points);
  }
  const auto predictions = v.posterior->predict(points);
  const auto expectation = [&](std::size_t k, double resource) {
    const gp::Prediction& p = predictions[k];
    return JobExpectation{expected_improvement(p, v.incumbent_at(resource)),
                          v.scale.in_user_units(p, resource, maximize_), std::nullopt};
  };
  ContinuationScores out;
  out.start = expectation(0, first_resource);
  for (std::size_t k = 0; k < paused.size(); ++k)
    out.resumes.push_back(expectation(k + 1, paused[k].resource));
  // What a step of each would cost: a paused trial's as measured, else as predicted from
  // the configuration (all or none: the scheduler compares like with like).
  const std::size_t row = model_dims();
  const auto features = static_cast<std::ptrdiff_t>(encoder_.dims());
  std::vector<double> configurations;
  for (std::size_t k = 0; k < predictions.size(); ++k) {
    const auto at = points.begin() + static_cast<std::ptrdiff_t>(k * row);
    configurations.insert(configurations.end(), at, at + features);
  }
  if (const auto seconds = costs_.predicted(configurations)) {
    out.start.seconds = (*seconds)[0];
    for (std::size_t k = 0; k < paused.size(); ++k)
      out.resumes[k].seconds = costs_.measured(paused[k].trial).value_or((*seconds)[k + 1]);
  }
  return out;
}

PredictedFinal MobsterSuggester::Standardisation::in_user_units(const gp::Prediction& p,
                                                                double resource,
                                                                bool maximize) const {
  // The 10-90 % interval of the latent value: +-1.2816 standard deviations, each end
  // mapped back (the map is monotone, so the ends stay the ends).
  const auto [mean, low, high] =
      scale.target_interval(p.mean, 1.2815515655446004 * std::sqrt(p.variance));
  const double sign = maximize ? 1.0 : -1.0;
  return PredictedFinal{resource, sign * unit * mean,
                        std::min(sign * unit * low, sign * unit * high),
                        std::max(sign * unit * low, sign * unit * high)};
}

// The view is a cache of the model, made again from what is written when next asked.
void MobsterSuggester::save_state(StateOut& archive) const {
  archive(costs_, trials_, observations_, chosen_, pending_, first_resource_, fits_, version_,
          clock_, check_results_);
}

void MobsterSuggester::load_state(StateIn& archive) {
  archive(costs_, trials_, observations_, chosen_, pending_, first_resource_, fits_, version_,
          clock_, check_results_);
  view_.reset();
  wave_.reset();
  // The box is a function of the observations in arrival order: fed them again.
  if (options_.trust_region) {
    trust_region_.emplace(sampled_parameters(space_));
    std::vector<bool> seen;
    for (const auto& o : observations_) {
      if (o.trial >= seen.size()) seen.resize(o.trial + 1, false);
      judge_box(o.trial, o.resource, o.score, !seen[o.trial]);
      seen[o.trial] = true;
    }
  }
}

}  // namespace slurmtune::core
