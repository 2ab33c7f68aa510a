// MobsterSuggester's use of `[sampler] prior` (issue #64): which start-ups the earlier
// studies' region draws, how large its share is now (prior_check), and the earlier
// studies' rows in the model (prior_model). Apart from mobster_suggester.cpp, which holds
// the model's fit, acquisition and state.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "core/random.hpp"
#include "core/search/gp/mobster_suggester.hpp"
#include "core/search/gp/observation_choice.hpp"
#include "core/search/gp/target_transform.hpp"
#include "core/search/gp/unit_draws.hpp"

namespace slurmtune::core {
namespace {

constexpr std::uint64_t kPriorStream = 0x7072696f72ULL;  // "prior"

}  // namespace

Configuration MobsterSuggester::prior_start(TrialId trial) const {
  if (trial < options_.prior_exact && trial < prior_->good().size()) return prior_->good()[trial];
  Xoshiro256 rng(derive_seed(seed_, kPriorStream, trial));
  // The coin is tossed either way, so a start-up past prior_startup is the one prior_share
  // = 0 would draw, and a check trial's stream is the one the coin would have left.
  const bool heads = rng.uniform01() < prior_share_now();
  const bool drawn_by_prior = !options_.prior_startup || trial < *options_.prior_startup;
  if (const auto check = check_draw(trial); check ? *check : heads && drawn_by_prior)
    return prior_->sample(rng);
  return sobol_ ? gp::sobol_configuration(space_, *sobol_, trial)
                : gp::random_configuration(space_, rng);
}

TrustLessons MobsterSuggester::trust_lessons() const {
  if (!prior_) return {};
  const auto& lessons = prior_->lessons();
  const std::size_t exact = std::min(options_.prior_exact, lessons.size());
  return {lessons.begin(), lessons.begin() + static_cast<std::ptrdiff_t>(exact)};
}

std::optional<bool> MobsterSuggester::check_draw(TrialId trial) const {
  const std::size_t exact = std::min(options_.prior_exact, prior_->good().size());
  if (!options_.prior_check || trial < exact || trial >= exact + 2 * kPriorCheckPairs)
    return std::nullopt;
  const bool drawn_by_prior = !options_.prior_startup || trial < *options_.prior_startup;
  return drawn_by_prior && (trial - exact) % 2 == 0;
}

double MobsterSuggester::prior_share_now() const {
  if (!options_.prior_check || !first_resource_) return options_.prior_share;
  std::vector<double> from_prior, from_space;
  for (const CheckResult& r : check_results_)
    if (r.resource == *first_resource_) (r.from_prior ? from_prior : from_space).push_back(r.score);
  if (from_prior.size() < kPriorCheckMin || from_space.size() < kPriorCheckMin)
    return options_.prior_share;
  double wins = 0;
  for (const double p : from_prior)
    for (const double u : from_space)
      wins += p > u ? 1.0 : p == u ? 0.5 : 0.0;
  const double a = wins / static_cast<double>(from_prior.size() * from_space.size());
  return options_.prior_share * std::clamp((a - 0.5) / (kPriorCheckTrusted - 0.5), 0.0, 1.0);
}

gp::Data MobsterSuggester::prior_task_rows(const std::vector<PastTrial>& prior) const {
  // Every earlier observation as this study would have made it: each rung a trial was judged
  // at, and a completed trial's last report past its last rung (MobsterSuggester::ended).
  struct Row {
    std::size_t trial;
    double resource, score;
  };
  std::vector<Row> rows;
  std::vector<gp::RankedScore> ranked;
  const auto add = [&](std::size_t t, double resource, double value) {
    const double score =
        std::isnan(value) ? -std::numeric_limits<double>::infinity() : (maximize_ ? value : -value);
    rows.push_back({t, resource, score});
    ranked.push_back({resource, score});
  };
  for (std::size_t t = 0; t < prior.size(); ++t) {
    std::optional<double> judged_at;
    for (const auto& j : prior[t].judged) {
      add(t, j.milestone, j.value);
      judged_at = j.milestone;
    }
    if (prior[t].end == TrialEnd::Completed && prior[t].last && judged_at != prior[t].last->first)
      add(t, prior[t].last->first, prior[t].last->second);
  }
  // As many as a fit of this study's own may take, chosen as its own are: a bounded model
  // however large the earlier studies were.
  gp::Data data;
  data.dims = model_dims();
  double worst = std::numeric_limits<double>::infinity();
  for (const auto& r : rows)
    if (std::isfinite(r.score)) worst = std::min(worst, r.score);
  if (!std::isfinite(worst)) worst = 0;
  for (const std::size_t i :
       gp::choose_observations(ranked, ranked.size(), options_.max_fit_observations)) {
    encoder_.encode(prior[rows[i].trial].config, data.inputs);  // the chosen ones only
    data.inputs.push_back(resource_feature(rows[i].resource));
    data.inputs.push_back(0.0);  // the earlier task
    data.targets.push_back(std::isfinite(rows[i].score) ? rows[i].score : worst);
  }
  // Standardised apart from this study's: another size has other values everywhere (and,
  // as data_of does, values near the largest doubles scaled down first).
  double magnitude = 0;
  for (const double y : data.targets)
    magnitude = std::max(magnitude, std::fabs(y));
  if (magnitude > 1e100)
    for (double& y : data.targets)
      y /= magnitude;
  data.targets = gp::scale_targets(options_.target_transform, data.targets).values;
  return data;
}

}  // namespace slurmtune::core
