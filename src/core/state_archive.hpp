#pragma once
// The decision state's snapshot (issue #63): a scheduler and a sampler write what they
// have learnt (save_state) and a fresh one built from the same study reads it back
// (load_state), so a resumed study starts from the snapshot instead of replaying every
// report of its results file. Only what changes as the study runs is written: what the
// study file fixes (milestones, the search space, options) comes from the constructor.
//
// The archive is cereal's portable binary one (little-endian, fixed widths): a snapshot
// written on one node of a cluster reads on another. This header only names the two
// archive types; state_archive_io.hpp, which includes cereal, is for the .cpp files that
// define the state of a class.
#include <cstdint>
#include <string>
#include <string_view>

namespace cereal {
class PortableBinaryOutputArchive;
class PortableBinaryInputArchive;
}  // namespace cereal

namespace slurmtune::core {

using StateOut = cereal::PortableBinaryOutputArchive;
using StateIn = cereal::PortableBinaryInputArchive;

/// The layout of every class's state as this build writes it. A snapshot of another
/// number is not read (the study resumes by replaying its file instead); raise it when a
/// class's saved fields change.
inline constexpr std::uint32_t kStateFormat = 1;

class Scheduler;
class Suggester;

/// The state of a study's scheduler and sampler, as bytes.
std::string save_decision_state(const Scheduler& scheduler, const Suggester& suggester);
/// Puts a scheduler and a sampler made from the study that wrote `bytes` where they
/// were. Throws InputError when the bytes end early or have some left over (a snapshot
/// of another study or another layout).
void load_decision_state(std::string_view bytes, Scheduler& scheduler, Suggester& suggester);

}  // namespace slurmtune::core
