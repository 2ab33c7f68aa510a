#pragma once
// The rungs a `[scheduler]` table resolves to: what asha_promotion and freeze_thaw pause
// trials at, and the plain-words summary of every scheduler's rungs that `validate`
// prints, so a ladder that stops short of max_t is seen before the study runs.
#include <string>
#include <vector>

#include "core/schedulers/scheduler_spec.hpp"

namespace slurmtune::core {

/// The explicit milestones, or grace * rf^k for k >= skip up to max_t: asha's rungs for
/// its bracket `skip` (Ray's rule), and the ladder the others start from.
std::vector<double> bracket_milestones(const SchedulerSpec& spec, int skip = 0);

/// asha_promotion's and freeze_thaw's rungs: the explicit milestones, or grace * rf^k
/// below max_t, and then max_t itself, so the top rung (where a trial has run its
/// course) is max_t whatever ladder leads there. A rung within a relative 1e-9 of max_t
/// is max_t (0.1 * 3 * 3 is 0.9000000000000001).
std::vector<double> promotion_milestones(const SchedulerSpec& spec);

/// One line per bracket (or one for the study) of the resources at which `spec`'s
/// scheduler judges a trial and where a trial ends.
std::vector<std::string> describe_rungs(const SchedulerSpec& spec);

}  // namespace slurmtune::core
