#pragma once
// What a MOBSTER prior's first wave is once the trials a study runs at once are known: the
// sampler's start from the earlier best (resolve_prior_start on the SamplerSpec) and the
// scheduler's trust in them.
#include <cstddef>

#include "core/study/study_spec.hpp"

namespace slurmtune::core {

/// Resolves the sampler's prior start for `trials_at_once` and, where the study file does not
/// name asha_promotion's trusted_trials, trusts every earlier best the prior starts as they
/// were (its resolved prior_exact; issue #64, C18 adopted on 2026-12-04). A study already
/// resolved, or resumed with what its results file recorded, keeps its values.
void resolve_prior_start(StudySpec& study, std::size_t trials_at_once);

}  // namespace slurmtune::core
