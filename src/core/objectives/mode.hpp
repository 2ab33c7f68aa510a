#pragma once
// The direction of one objective. Objectives, schedulers and samplers all speak of it;
// it lives here, below all of them, so that the scheduler interface and the objectives
// need not include each other.

namespace slurmtune::core {

enum class Mode { Min, Max };

}  // namespace slurmtune::core
