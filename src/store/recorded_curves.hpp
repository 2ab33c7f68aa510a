#pragma once
// A past results file as recorded learning curves for `slurmtune simulate --curves`: each
// trial of /trials is one configuration's run, its /metrics rows the curve. A step's
// duration is the time since the trial's previous report, or since the (re)launch of
// its attempt (Start, Resume, Retry events and session starts), so the first report of
// an attempt carries its start-up. A step reported twice (re-run after a kill) keeps
// its first row. A trial without reports is not a curve; one the recorded study left
// running or paused ended there as stopped.
#include <string>

#include "core/simulation/curve_table.hpp"
#include "core/study/study_spec.hpp"

namespace slurmtune::store {

/// Reads the curves of the results file `path` for the study `study` (its metric and its
/// search space's parameter names must be the recorded ones).
core::CurveTable read_recorded_curves(const std::string& path, const core::StudySpec& study);

}  // namespace slurmtune::store
