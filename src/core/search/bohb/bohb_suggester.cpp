#include "core/search/bohb/bohb_suggester.hpp"

#include <algorithm>
#include <cmath>

#include "core/search/model_suggesters.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {
namespace {

std::vector<bohb::Dimension> bohb_space(const SearchSpace& space,
                                        const std::vector<std::size_t>& sampled) {
  std::vector<bohb::Dimension> out;
  for (const auto p : sampled) {
    const Domain& d = space.parameters()[p].domain;
    out.push_back({d.kind == DomainKind::Choice ? d.values.size() : 0});
  }
  return out;
}

// BOHB's vector space: unit coordinates for numbers, indices for choices.
ParamValue from_bohb(const Domain& d, double x) {
  if (d.kind == DomainKind::Choice) return d.values[static_cast<std::size_t>(x)];
  const ParamValue v = d.from_unit(std::min(x, std::nextafter(1.0, 0.0)));
  // A q-grid need not fit the bounds (qloguniform [1, 100] by 5 rounds 1 to 0).
  return d.admits(v) ? v : d.from_number(as_number(v));
}

}  // namespace

BohbSuggester::BohbSuggester(const SearchSpace& space, const BohbOptions& options, bool maximize,
                             std::uint32_t seed)
    : space_(space),
      sampled_(sampled_parameters(space, "bohb")),
      maximize_(maximize),
      sampler_(bohb_space(space, sampled_), options, seed) {}

double BohbSuggester::loss(double value) const {
  return maximize_ ? -value : value;
}

Suggestion BohbSuggester::suggest(TrialId trial) {
  const auto draw = sampler_.draw();
  Suggestion s;
  s.config = configuration_of(space_, sampled_, draw.vector, from_bohb);
  // A whole vector is drawn; what does not exist in it is dropped (ConfigSpace's
  // deactivate_inactive_hyperparameters).
  space_.resolve_activity(s.config);
  s.info.origin = draw.from_model ? SuggestionOrigin::Model : SuggestionOrigin::Random;
  s.info.position = {sampler_.words_drawn(), 0};
  started(trial, s.config);
  return s;
}

void BohbSuggester::started(TrialId trial, const Configuration& config) {
  if (trial >= trials_.size()) trials_.resize(trial + 1);
  auto& t = trials_[trial];
  t.started = true;
  t.vector.clear();
  for (const auto p : sampled_) {
    const Domain& d = space_.parameters()[p].domain;
    if (!config.is_active(p)) {  // NaN, as ConfigSpace's get_array; imputed when fitted
      t.vector.push_back(std::nan(""));
      continue;
    }
    t.vector.push_back(d.kind == DomainKind::Choice
                           ? static_cast<double>(d.index_of(config.values[p]))
                           : d.to_unit(config.values[p]));
  }
}

void BohbSuggester::reported(TrialId trial, double step, double value,
                             const ReportOutcome& outcome) {
  if (trial >= trials_.size() || !trials_[trial].started) return;  // nothing to learn from
  auto& t = trials_[trial];
  t.last_step = step;
  t.last_value = value;
  // Judged at a rung: an observation at that rung's budget, whatever the verdict. A
  // trial the scheduler stops there still tells the model how good it was there.
  if (outcome.milestone) {
    sampler_.observe(*outcome.milestone, t.vector, loss(value));
    t.observed_budget = *outcome.milestone;
  }
}

void BohbSuggester::ended(TrialId trial, TrialEnd how) {
  if (trial >= trials_.size() || !trials_[trial].started) return;
  auto& t = trials_[trial];
  // A completed trial is an observation at its full budget (max_t: no rung there).
  if (how != TrialEnd::Completed || !t.last_step || t.observed_budget == t.last_step) return;
  sampler_.observe(*t.last_step, t.vector, loss(*t.last_value));
}

void BohbSuggester::restore(const SamplerPosition& position) {
  sampler_.restore(position.model_words);
}

SLURMTUNE_STATE(BohbSuggester, sampler_, trials_)

}  // namespace slurmtune::core
