#pragma once
// Which scheduler a study's [scheduler] builds. In a file of its own, above the
// schedulers' folders: the interface (core/schedulers) knows none of its implementations,
// and every include points down.
#include <cstdint>
#include <memory>
#include <string>

#include "core/objectives/mode.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/schedulers/scheduler_spec.hpp"

namespace slurmtune::core {

/// Builds the scheduler `spec` describes. `seed` drives its random choices (bracket
/// draws); `study_name` feeds Optuna's Hyperband bracket hash.
std::unique_ptr<Scheduler> make_scheduler(const SchedulerSpec& spec, Mode mode, std::uint64_t seed,
                                          const std::string& study_name);

}  // namespace slurmtune::core
