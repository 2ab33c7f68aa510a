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
// define the state of a class; core/study/decision_state.hpp writes and reads a study's
// scheduler and sampler together.
#include <cstdint>

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
inline constexpr std::uint32_t kStateFormat = 5;

}  // namespace slurmtune::core
