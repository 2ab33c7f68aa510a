#pragma once
// Shared by the suggesters' unit tests: a space with every kind of domain, a loss with a
// known optimum, sequential one-step trials, and sampler specs with small start-ups.
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "core/search/model_suggesters.hpp"

namespace slurmtune::testing {

using namespace slurmtune::core;

inline Domain ranged(DomainKind kind, double low, double high, double q = 0) {
  return Domain{kind, low, high, q, {}};
}

inline Domain listed(DomainKind kind, std::vector<ParamValue> values) {
  return Domain{kind, 0, 0, 0, std::move(values)};
}

inline SearchSpace every_kind() {
  return SearchSpace({
      {"u", ranged(DomainKind::Uniform, -1, 1)},
      {"lu", ranged(DomainKind::LogUniform, 1e-4, 1e-1)},
      {"qu", ranged(DomainKind::QUniform, 0, 1, 0.25)},
      {"qlu", ranged(DomainKind::QLogUniform, 1, 100, 5)},
      {"ri", ranged(DomainKind::RandInt, 2, 9)},
      {"qri", ranged(DomainKind::QRandInt, 0, 20, 4)},
      {"lri", ranged(DomainKind::LogRandInt, 8, 257)},
      {"opt",
       listed(DomainKind::Choice, {ParamValue{"sgd"}, ParamValue{"adam"}, ParamValue{"rms"}})},
      {"fixed", listed(DomainKind::Constant, {ParamValue{std::int64_t{3}}})},
      {"step", ranged(DomainKind::SteppedUniform, 0.1, 0.7, 0.2)},
  });
}

// A loss with its optimum at u = 0.3 (the other parameters add a little).
inline double loss_of(const SearchSpace& space, const Configuration& c) {
  double loss = std::pow(as_number(c.values[0]) - 0.3, 2);
  for (std::size_t p = 1; p < space.size(); ++p)
    if (space.parameters()[p].domain.kind != DomainKind::Choice &&
        space.parameters()[p].domain.kind != DomainKind::Constant)
      loss += 0.01 * space.parameters()[p].domain.to_unit(c.values[p]);
  return loss;
}

inline ReportOutcome at_rung(double milestone,
                             SchedulerDecision decision = SchedulerDecision::Continue) {
  ReportOutcome o;
  o.decision = decision;
  o.rung = 0;
  o.milestone = milestone;
  return o;
}

// Runs `n` sequential trials of one step each through `s`; returns the suggestions.
inline std::vector<Suggestion> run_trials(Suggester& s, const SearchSpace& space, TrialId first,
                                          std::size_t n) {
  std::vector<Suggestion> out;
  for (TrialId t = first; t < first + n; ++t) {
    out.push_back(s.suggest(t));
    s.reported(t, 1, loss_of(space, out.back().config), {});
    s.ended(t, TrialEnd::Completed);
  }
  return out;
}

inline SamplerSpec tpe_spec(std::size_t startup = 5) {
  SamplerSpec spec;
  spec.kind = SamplerKind::Tpe;
  spec.tpe.n_startup_trials = startup;
  return spec;
}

inline SamplerSpec bohb_spec(double random_fraction = 1.0 / 3.0) {
  SamplerSpec spec;
  spec.kind = SamplerKind::Bohb;
  spec.bohb.random_fraction = random_fraction;
  return spec;
}

inline SamplerSpec mobster_spec(std::size_t startup = 5) {
  SamplerSpec spec;
  spec.kind = SamplerKind::Mobster;
  spec.mobster.n_startup_trials = startup;
  spec.mobster.max_resource = 27;
  spec.mobster.random_fraction = 0;
  return spec;
}

}  // namespace slurmtune::testing
