#include "core/study/prior_start.hpp"

namespace slurmtune::core {

void resolve_prior_start(StudySpec& study, std::size_t trials_at_once) {
  const bool was_resolved = study.sampler.prior_start_resolved;
  resolve_prior_start(study.sampler, trials_at_once);
  if (was_resolved || !has_prior(study.sampler) ||
      study.scheduler.type != SchedulerType::AshaPromotion || study.scheduler.trusted_trials_named)
    return;
  study.scheduler.trusted_trials = static_cast<std::int64_t>(study.sampler.mobster.prior_exact);
}

}  // namespace slurmtune::core
