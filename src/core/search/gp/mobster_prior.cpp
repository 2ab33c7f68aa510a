// MobsterSuggester's use of `[sampler] prior` (issue #64): which start-ups the earlier
// studies' region draws, and how large its share is now (prior_check). Apart from
// mobster_suggester.cpp, which holds the model's fit, acquisition and state.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/random.hpp"
#include "core/search/gp/mobster_suggester.hpp"
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

}  // namespace slurmtune::core
