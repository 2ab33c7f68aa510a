#pragma once
// `slurmtune replay`: feed a recorded event log to a scheduler and print its decisions.
// Input: one JSON object per line (blank lines and lines starting with '#' skipped):
//   {"type":"start","trial":3}            optional "bracket":k forces the bracket;
//                                         optional "config":{"lr":0.01,...}: what ran
//   {"type":"report","trial":3,"step":5,"value":0.44}
//   {"type":"end","trial":3,"state":"completed|stopped|failed"}  optional "step","value"
// Output: one JSON line per report:
//   {"trial":3,"step":5,"decision":"stop","rung":0,"milestone":1,"cutoff":0.41}
// and one per start that carries a config: what the sampler suggests there, given the
// history so far, and whether it is what ran:
//   {"trial":3,"origin":"model","suggested":{...},"matches":false,"differs":["lr"]}
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/search/suggester.hpp"

namespace slurmtune::core {

/// The study's sampler during a replay: every start asks it for a suggestion (a
/// model-based one must see every trial, in id order), and it learns from what ran.
struct ReplaySampler {
  Suggester& suggester;
  const SearchSpace& space;
  bool model_based = false;
  TrialId next_trial = 0;  ///< model-based: the id the next start must have
  /// The study's metric columns (StudySpec::metrics): a report's "value" is the first,
  /// its "metrics" object gives others by name.
  std::vector<std::string> metric_columns;
  /// Each trial's last reported step: where a resumption's timed stretch begins.
  std::map<TrialId, double> last_step;
};

/// Replays `in` into `scheduler` (and `sampler`, when given), writing decisions to
/// `out`. A malformed line throws InputError naming `source` and the line number.
/// Returns the number of reports.
std::size_t replay_events(Scheduler& scheduler, std::istream& in, std::ostream& out,
                          const std::string& source, ReplaySampler* sampler = nullptr);

/// A resource or metric value as JSON: integral values without a fraction, others in
/// shortest round-trip form, non-finite values as Python writes them.
std::string json_number(double value);

}  // namespace slurmtune::core
