#pragma once
// A results file's trials as a study of several objectives or with constraints sees
// them: each trial's last reported value of every objective and constraint metric, its
// feasibility, and the Pareto front. `best`, `status` and `export` show these; the
// Python module computes the same from the same rule (python.md).
#include <cstdint>
#include <optional>
#include <vector>

#include "store/study_reader.hpp"

namespace slurmtune::store {

struct TrialStanding {
  std::vector<double> objectives;  ///< the last reported value of each (NaN: never)
  /// The constraints' values (<= 0 satisfied); nullopt where a constraint's metric was
  /// never reported. Empty when the study has no constraints.
  std::optional<std::vector<double>> constraints;
  /// Every constraint satisfied (true in a study without constraints).
  bool feasible = true;
};

/// Per trial, by id (one per /trials row). From `trials` alone in a file of schema 10 on
/// (/trials keeps each objective's last value); older files take one pass over /metrics.
std::vector<TrialStanding> trial_standings(const StudyReader& reader,
                                           const std::vector<TrialRecord>& trials);
/// The same from every /metrics row, whatever the schema: what the summaries in /trials
/// must agree with (the tests compare the two).
std::vector<TrialStanding> trial_standings_from_metrics(const StudyReader& reader,
                                                        std::size_t trials);

/// The Pareto front: completed, feasible trials with a value for every objective that no
/// other such trial dominates, by ascending id.
std::vector<std::uint64_t> pareto_front(const core::StudySpec& spec,
                                        const std::vector<TrialRecord>& trials,
                                        const std::vector<TrialStanding>& standings);

}  // namespace slurmtune::store
