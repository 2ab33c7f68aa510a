#pragma once
// A trial's id: 0, 1, 2, ... in the order trials start; row `id` of the results file's
// /trials. In a header of its own so that the wire messages, which carry it, need none of
// the engine's headers.
#include <cstdint>

namespace slurmtune::core {

using TrialId = std::uint64_t;

}  // namespace slurmtune::core
