#pragma once
// A study's scheduler and sampler written together as bytes, and read back into ones made
// from the same study (core/state_archive.hpp says what each writes).
#include <string>
#include <string_view>

#include "core/schedulers/scheduler.hpp"
#include "core/search/suggester.hpp"

namespace slurmtune::core {

/// The state of a study's scheduler and sampler, as bytes.
std::string save_decision_state(const Scheduler& scheduler, const Suggester& suggester);
/// Puts a scheduler and a sampler made from the study that wrote `bytes` where they
/// were. Throws InputError when the bytes end early or have some left over (a snapshot
/// of another study or another layout).
void load_decision_state(std::string_view bytes, Scheduler& scheduler, Suggester& suggester);

}  // namespace slurmtune::core
