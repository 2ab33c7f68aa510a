#pragma once
// `[sampler] warm_start` and `prior`: the trials of earlier studies' results files, in
// this study's space, for its model-based sampler to learn from first, or (prior) to
// search first where they did best (core/search/past_trial.hpp).
#include <cstddef>
#include <string>
#include <vector>

#include "core/study/study_spec.hpp"

namespace slurmtune::store {

/// What one results file gave.
struct WarmStartSource {
  std::string key;                  ///< "warm_start" or "prior": the list that named it
  std::string path;                 ///< as resolved
  std::size_t used = 0;             ///< trials the sampler learns from
  std::size_t outside = 0;          ///< left out: a value this study's space does not have
  std::size_t unfinished = 0;       ///< left out: pending or running when that study stopped
  std::vector<std::string> absent;  ///< this study's parameters that study did not have
};

/// Reads `study.sampler.warm_start_files` (relative to the study file's folder) into
/// `study.sampler.warm_start`, and `prior_files` into `prior` alike. A trial keeps the parameters
/// both studies have (a value outside this study's domain leaves the trial out); the others are
/// absent in it. InputError naming the file when it is no results file, optimizes another metric or
/// in another direction, shares no parameter, or has no trial to learn from.
std::vector<WarmStartSource> load_warm_start(core::StudySpec& study);

}  // namespace slurmtune::store
