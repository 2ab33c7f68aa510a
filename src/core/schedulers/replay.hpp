#pragma once
// `slurmtune replay`: feed a recorded event log to a scheduler and print its decisions.
// Input: one JSON object per line (blank lines and lines starting with '#' skipped):
//   {"type":"start","trial":3}            optional "bracket":k forces the bracket
//   {"type":"report","trial":3,"step":5,"value":0.44}
//   {"type":"end","trial":3,"state":"completed|stopped|failed"}  optional "step","value"
// Output: one JSON line per report:
//   {"trial":3,"step":5,"decision":"stop","rung":0,"milestone":1,"cutoff":0.41}
#include <iosfwd>
#include <string>
#include <string_view>

#include "core/schedulers/scheduler.hpp"

namespace slurmtune::core {

/// Replays `in` into `scheduler`, writing decisions to `out`. A malformed line throws
/// InputError naming `source` and the line number. Returns the number of reports.
std::size_t replay_events(Scheduler& scheduler, std::istream& in, std::ostream& out,
                          const std::string& source);

/// A resource or metric value as JSON: integral values without a fraction, others in
/// shortest round-trip form, non-finite values as Python writes them.
std::string json_number(double value);

}  // namespace slurmtune::core
