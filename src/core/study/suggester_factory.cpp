#include "core/study/suggester_factory.hpp"

#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/search/bohb/bohb_suggester.hpp"
#include "core/search/gp/mobster_suggester.hpp"
#include "core/search/model_suggesters.hpp"
#include "core/search/suggestions_ahead.hpp"

namespace slurmtune::core {
namespace {

std::unique_ptr<Suggester> make_sampler(const SearchSpace& space, const SamplerSpec& spec,
                                        bool maximize, std::uint64_t seed) {
  if (!is_model_based(spec.kind)) return std::make_unique<BlindSuggester>(space, spec.kind, seed);
  if (spec.kind == SamplerKind::Mobster)
    return std::make_unique<MobsterSuggester>(space, spec.mobster, maximize, seed, spec.prior);
  // numpy's RandomState (which the tpe stream must equal) takes 32-bit seeds.
  if (seed > std::numeric_limits<std::uint32_t>::max())
    throw InputError("sampler \"" + std::string(sampler_keyword(spec.kind)) +
                     "\" takes a seed below 2^32 (numpy's RandomState); the study's is " +
                     std::to_string(seed));
  const auto seed32 = static_cast<std::uint32_t>(seed);
  if (spec.kind == SamplerKind::Tpe)
    return std::make_unique<TpeSuggester>(space, spec, maximize, seed32);
  if (spec.kind == SamplerKind::Nsga2) return std::make_unique<Nsga2Suggester>(space, spec, seed32);
  return std::make_unique<BohbSuggester>(space, spec.bohb, maximize, seed32);
}

}  // namespace

std::unique_ptr<Suggester> make_suggester(const SearchSpace& space, const SamplerSpec& spec,
                                          bool maximize, std::uint64_t seed) {
  auto suggester = with_study_inputs(make_sampler(space, spec, maximize, seed), space, spec);
  if (!spec.suggest_ahead || !is_model_based(spec.kind)) return suggester;
  return std::make_unique<SuggestionsAhead>(std::move(suggester));
}

}  // namespace slurmtune::core
