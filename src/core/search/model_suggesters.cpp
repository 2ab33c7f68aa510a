#include "core/search/model_suggesters.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {
namespace {

using tpe::Distribution;

// A configuration's value as the sampler's number: listed values by index.
double internal_value(const Domain& d, const ParamValue& value) {
  return d.is_listed() ? static_cast<double>(d.index_of(value)) : as_number(value);
}

ParamValue from_internal(const Domain& d, double x) {
  if (std::isnan(x)) return placeholder(d);  // not suggested: the parameter is inactive
  if (d.is_listed()) return d.values[static_cast<std::size_t>(x)];
  // Optuna's stepped float is already on its grid, or is a value the study file gave
  // (an enqueued one a child inherits): as it is, not rounded again.
  if (d.kind == DomainKind::SteppedUniform) return x;
  return d.from_number(x);
}

// An enqueued trial's fixed values of the sampled parameters (internal representation;
// nullopt where not fixed, or with no `fixed` at all).
std::vector<std::optional<double>> fixed_values(const SearchSpace& space,
                                                const std::vector<std::size_t>& sampled,
                                                const PartialConfiguration* fixed) {
  std::vector<std::optional<double>> given(sampled.size());
  for (std::size_t k = 0; fixed && k < sampled.size(); ++k)
    if (const auto p = sampled[k]; p < fixed->values.size() && fixed->values[p])
      given[k] = internal_value(space.parameters()[p].domain, *fixed->values[p]);
  return given;
}

// The space's `when`s in the sampler's terms: parents by position among the sampled
// parameters, values by their index in the parent's choice.
std::vector<std::vector<tpe::Condition>> tpe_conditions(const SearchSpace& space,
                                                        const std::vector<std::size_t>& sampled) {
  std::vector<std::vector<tpe::Condition>> out;
  for (const auto p : sampled) {
    auto& conditions = out.emplace_back();
    for (const auto& c : space.parameters()[p].when) {
      tpe::Condition t;
      t.parent = static_cast<std::size_t>(std::find(sampled.begin(), sampled.end(), c.parent) -
                                          sampled.begin());
      for (const auto& v : c.values)
        t.values.push_back(internal_value(space.parameters()[c.parent].domain, v));
      conditions.push_back(std::move(t));
    }
  }
  return out;
}

// The sampled parameters' positions sorted by their names (Optuna sorts a group's).
std::vector<std::size_t> by_name(const SearchSpace& space,
                                 const std::vector<std::size_t>& sampled) {
  std::vector<std::size_t> order(sampled.size());
  for (std::size_t k = 0; k < order.size(); ++k)
    order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return space.parameters()[sampled[a]].name < space.parameters()[sampled[b]].name;
  });
  return order;
}

std::vector<Distribution> tpe_space(const SearchSpace& space,
                                    const std::vector<std::size_t>& sampled) {
  std::vector<Distribution> out;
  for (const auto p : sampled)
    out.push_back(tpe_distribution(space.parameters()[p].domain));
  return out;
}

}  // namespace

std::vector<std::size_t> sampled_parameters(const SearchSpace& space, std::string_view sampler) {
  std::vector<std::size_t> sampled;
  for (std::size_t p = 0; p < space.size(); ++p) {
    const auto& param = space.parameters()[p];
    if (param.domain.kind == DomainKind::Grid)
      throw InputError("sampler \"" + std::string(sampler) + "\" chooses every value itself, but " +
                       "parameter '" + param.name + "' is a grid axis; make it a choice");
    if (param.domain.kind != DomainKind::Constant) sampled.push_back(p);
  }
  return sampled;
}

Configuration configuration_of(const SearchSpace& space, const std::vector<std::size_t>& sampled,
                               const std::vector<double>& numbers,
                               ParamValue (*value_of)(const Domain&, double)) {
  Configuration config;
  std::size_t next = 0;
  for (std::size_t p = 0; p < space.size(); ++p) {
    const Domain& d = space.parameters()[p].domain;
    const bool is_sampled = next < sampled.size() && sampled[next] == p;
    config.values.push_back(is_sampled ? value_of(d, numbers[next++]) : d.values.front());
  }
  return config;
}

Distribution tpe_distribution(const Domain& d) {
  switch (d.kind) {
    case DomainKind::Uniform:
    case DomainKind::QUniform:
      return Distribution{Distribution::Kind::Float, d.low, d.high, std::nullopt, false, 0};
    case DomainKind::SteppedUniform:  // Optuna's FloatDistribution(low, high, step=q)
      return Distribution{Distribution::Kind::Float, d.low, d.high, d.q, false, 0};
    case DomainKind::LogUniform:
    case DomainKind::QLogUniform:
      return Distribution{Distribution::Kind::Float, d.low, d.high, std::nullopt, true, 0};
    case DomainKind::RandInt:
      return Distribution{Distribution::Kind::Int, d.low, d.high - 1, 1.0, false, 0};
    case DomainKind::LogRandInt:
      return Distribution{Distribution::Kind::Int, d.low, d.high - 1, 1.0, true, 0};
    case DomainKind::QRandInt:
      return Distribution{Distribution::Kind::Int,
                          d.low,
                          d.low + std::floor((d.high - d.low) / d.q) * d.q,
                          d.q,
                          false,
                          0};
    case DomainKind::Choice:
    case DomainKind::Grid:
    case DomainKind::Constant:
      return Distribution{
          Distribution::Kind::Categorical, 0, 0, std::nullopt, false, d.values.size()};
  }
  throw UsageError("tpe_distribution: unknown domain kind");
}

namespace {}  // namespace

// --- TPE -------------------------------------------------------------------------

namespace {

tpe::TpeOptions tpe_options(const SamplerSpec& spec) {
  tpe::TpeOptions options = spec.tpe;
  if (spec.objectives.size() > 1)
    for (const auto& o : spec.objectives)
      options.objectives_maximize.push_back(o.mode == Mode::Max);
  options.constrained = !spec.constraints.empty();
  return options;
}

}  // namespace

TpeSuggester::TpeSuggester(const SearchSpace& space, const SamplerSpec& spec, bool maximize,
                           std::uint32_t seed)
    : space_(space),
      sampled_(sampled_parameters(space, "tpe")),
      sampler_(tpe_space(space, sampled_), tpe_options(spec), seed, maximize,
               tpe_conditions(space, sampled_), by_name(space, sampled_)),
      reported_(spec),
      group_(spec.tpe.group) {}

tpe::TrialRecord& TpeSuggester::record(TrialId trial) {
  if (trial >= history_.size()) history_.resize(trial + 1);
  return history_[trial];
}

SamplerPosition TpeSuggester::position() const {
  return {sampler_.model_words(), sampler_.startup_words()};
}

Suggestion TpeSuggester::suggest(TrialId trial) {
  return suggest_with(trial, nullptr);
}

Suggestion TpeSuggester::suggest_fixed(TrialId trial, const PartialConfiguration& fixed) {
  return suggest_with(trial, &fixed);
}

Suggestion TpeSuggester::suggest_with(TrialId trial, const PartialConfiguration* fixed) {
  if (trial != history_.size())
    throw UsageError("tpe: trial " + std::to_string(trial) + " suggested out of order");
  const auto given = fixed_values(space_, sampled_, fixed);
  history_.emplace_back();
  suggested_ = trial;
  const auto numbers = sampler_.suggest(history_, given);
  Suggestion s;
  s.config = configuration_of(space_, sampled_, numbers, from_internal);
  space_.resolve_activity(s.config);
  s.info.origin = sampler_.last_was_startup() ? SuggestionOrigin::Startup : SuggestionOrigin::Model;
  s.info.position = position();
  // The fixed values themselves, not their round trip through the internal representation.
  if (fixed) apply_fixed(s, *fixed, space_);
  started(trial, s.config);
  return s;
}

void TpeSuggester::started(TrialId trial, const Configuration& config) {
  // A trial a resumed study replays: Optuna's group decomposition was updated when it
  // started, so it is now, in the same order.
  if (group_ && suggested_ != trial) sampler_.update_groups(history_);
  auto& r = record(trial);
  r.state = tpe::TrialRecord::State::Running;
  r.params.clear();
  for (const auto p : sampled_) {
    if (!config.is_active(p)) {  // the trial has no such parameter
      r.params.emplace_back();
      continue;
    }
    r.params.emplace_back(internal_value(space_.parameters()[p].domain, config.values[p]));
  }
  sampler_.changed(history_, trial);
}

void TpeSuggester::reported_metrics(TrialId trial, double /*step*/,
                                    const std::vector<double>& row) {
  if (reported_.needed() && trial < history_.size()) reported_.update(trial, row);
}

void TpeSuggester::reported(TrialId trial, double step, double value,
                            const ReportOutcome& outcome) {
  if (trial >= history_.size()) return;  // never started: not part of the history
  auto& r = history_[trial];
  r.last_intermediate = std::pair{step, value};
  // A paused trial waits for a promotion: Optuna would see it as pruned at this step.
  if (outcome.decision == SchedulerDecision::Pause) r.state = tpe::TrialRecord::State::Pruned;
  // A running trial's rank does not depend on its reports.
  if (r.state != tpe::TrialRecord::State::Running) sampler_.changed(history_, trial);
}

void TpeSuggester::resumed(TrialId trial) {
  if (trial >= history_.size()) return;
  history_[trial].state = tpe::TrialRecord::State::Running;
  sampler_.changed(history_, trial);
}

void TpeSuggester::ended(TrialId trial, TrialEnd how) {
  using State = tpe::TrialRecord::State;
  if (trial >= history_.size()) return;
  auto& r = history_[trial];
  const ObjectiveTracker& reported = reported_.of(trial);
  switch (how) {
    case TrialEnd::Completed:
      if (reported_.objectives().size() > 1) {  // the last value of each objective
        r.state = reported.complete() ? State::Complete : State::Failed;
        r.values = reported.objectives();
        break;
      }
      // Its objective value is its last report; without one (or NaN) Optuna fails it.
      if (r.last_intermediate && !std::isnan(r.last_intermediate->second)) {
        r.state = State::Complete;
        r.value = r.last_intermediate->second;
      } else {
        r.state = State::Failed;
      }
      break;
    case TrialEnd::Stopped:
      r.state = State::Pruned;
      break;
    case TrialEnd::Failed:
      r.state = State::Failed;
      break;
  }
  // Optuna evaluates constraints_func on completed and pruned trials.
  if (!reported_.constraints().empty() && r.state != State::Failed)
    r.constraints = reported.constraint_values(reported_.constraints());
  sampler_.changed(history_, trial);
}

void TpeSuggester::restore(const SamplerPosition& position) {
  sampler_.restore(position.model_words, position.startup_words);
}

// --- NSGA-II ---------------------------------------------------------------------

ReportedObjectives::ReportedObjectives(const SamplerSpec& spec)
    : objectives_(spec.objectives), constraints_(spec.constraints) {
  if (needed()) columns_ = ObjectiveColumns(spec.metric_columns, objectives_, constraints_);
}

void ReportedObjectives::update(TrialId trial, const std::vector<double>& row) {
  of(trial);
  trials_[trial].update(row, columns_);
}

const ObjectiveTracker& ReportedObjectives::of(TrialId trial) {
  if (trial >= trials_.size())
    trials_.resize(trial + 1, ObjectiveTracker(objectives_.size(), constraints_.size()));
  return trials_[trial];
}

Nsga2Suggester::Nsga2Suggester(const SearchSpace& space, const SamplerSpec& spec,
                               std::uint32_t seed)
    : space_(space),
      sampled_(sampled_parameters(space, "nsga2")),
      sampler_(tpe_space(space, sampled_), spec.nsga2, seed, !spec.constraints.empty(),
               tpe_conditions(space, sampled_)),
      reported_(spec) {}

nsga2::Individual& Nsga2Suggester::record(TrialId trial) {
  if (trial >= history_.size()) history_.resize(trial + 1);
  return history_[trial];
}

Suggestion Nsga2Suggester::suggest(TrialId trial) {
  return suggest_with(trial, nullptr);
}

Suggestion Nsga2Suggester::suggest_fixed(TrialId trial, const PartialConfiguration& fixed) {
  return suggest_with(trial, &fixed);
}

Suggestion Nsga2Suggester::suggest_with(TrialId trial, const PartialConfiguration* fixed) {
  if (trial != history_.size())
    throw UsageError("nsga2: trial " + std::to_string(trial) + " suggested out of order");
  const auto given = fixed_values(space_, sampled_, fixed);
  record(trial);
  suggested_ = trial;
  const auto numbers = sampler_.suggest(history_, given);
  Suggestion s;
  s.config = configuration_of(space_, sampled_, numbers, from_internal);
  space_.resolve_activity(s.config);
  s.info.origin = sampler_.last_was_bred() ? SuggestionOrigin::Model : SuggestionOrigin::Startup;
  s.info.position = {sampler_.model_words(), sampler_.startup_words()};
  if (fixed) apply_fixed(s, *fixed, space_);
  started(trial, s.config);
  return s;
}

void Nsga2Suggester::started(TrialId trial, const Configuration& config) {
  auto& r = record(trial);
  // A trial a resumed study replays joins the generation it joined when it started.
  if (suggested_ != trial) r.generation = sampler_.next_generation(history_);
  r.state = nsga2::Individual::State::Running;
  r.params.clear();
  for (const auto p : sampled_)
    r.params.push_back(config.is_active(p) ? std::optional(internal_value(
                                                 space_.parameters()[p].domain, config.values[p]))
                                           : std::nullopt);
}

void Nsga2Suggester::reported_metrics(TrialId trial, double /*step*/,
                                      const std::vector<double>& row) {
  if (trial < history_.size()) reported_.update(trial, row);
}

void Nsga2Suggester::ended(TrialId trial, TrialEnd how) {
  using State = nsga2::Individual::State;
  if (trial >= history_.size()) return;
  auto& r = history_[trial];
  const ObjectiveTracker& reported = reported_.of(trial);
  const auto& objectives = reported_.objectives();
  if (how == TrialEnd::Completed && reported.complete()) {
    r.state = State::Complete;
    r.values = reported.objectives();
    r.point.loss = r.values;
    for (std::size_t k = 0; k < objectives.size(); ++k)
      if (objectives[k].mode == Mode::Max) r.point.loss[k] = -r.point.loss[k];
    if (!reported_.constraints().empty())
      r.point.constraints = reported.constraint_values(reported_.constraints());
    return;
  }
  r.state = how == TrialEnd::Stopped ? State::Pruned : State::Failed;
}

void Nsga2Suggester::restore(const SamplerPosition& position) {
  sampler_.restore(position.model_words, position.startup_words);
}

SLURMTUNE_STATE(TpeSuggester, sampler_, history_, reported_, group_, suggested_)
SLURMTUNE_STATE(Nsga2Suggester, sampler_, history_, reported_, suggested_)

}  // namespace slurmtune::core
