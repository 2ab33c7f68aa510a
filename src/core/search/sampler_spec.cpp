#include "core/search/sampler_spec.hpp"

#include <algorithm>

namespace slurmtune::core {

std::size_t default_prior_startup(std::size_t prior_exact) {
  return std::max(kDefaultPriorStartup, prior_exact + kPriorStartupPastExact);
}

bool has_prior(const SamplerSpec& spec) {
  return spec.kind == SamplerKind::Mobster && !spec.prior_files.empty();
}

bool prior_start_follows_trials_at_once(const SamplerSpec& spec) {
  return has_prior(spec) && !spec.prior_start_resolved && !spec.prior_exact_named;
}

void resolve_prior_start(SamplerSpec& spec, std::size_t trials_at_once) {
  if (!has_prior(spec) || spec.prior_start_resolved) return;
  if (!spec.prior_exact_named)
    spec.mobster.prior_exact = std::max(kDefaultPriorExact, trials_at_once / 2);
  if (!spec.prior_startup_named)
    spec.mobster.prior_startup = default_prior_startup(spec.mobster.prior_exact);
  spec.prior_start_resolved = true;
}

}  // namespace slurmtune::core
