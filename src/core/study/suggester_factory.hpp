#pragma once
// Which suggester a study's sampler builds. In a file of its own, above the samplers'
// folders: the interface (core/search) knows none of the models, and every include
// points down.
#include <cstdint>
#include <memory>

#include "core/search/sampler_spec.hpp"
#include "core/search/suggester.hpp"
#include "core/space/search_space.hpp"

namespace slurmtune::core {

/// The suggester of `spec` over `space`; `maximize` for mode = "max". With enqueued
/// configurations, trial i < spec.enqueued.size() is suggested with entry i fixed; with
/// suggest_ahead, a SuggestionsAhead whose calls are made inline until the caller moves
/// them (`run`: onto a thread of their own).
std::unique_ptr<Suggester> make_suggester(const SearchSpace& space, const SamplerSpec& spec,
                                          bool maximize, std::uint64_t seed);

}  // namespace slurmtune::core
