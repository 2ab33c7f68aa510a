#pragma once
// Limits of the Slurm cluster that bound a study: MaxStepCount, the job steps one job
// may start (default 40,000), which a study of one step per trial runs out of.
#include <cstdint>
#include <optional>
#include <string>

namespace slurmtune::runtime {

/// MaxStepCount from `scontrol show config` output ("MaxStepCount = 40000"), or nullopt.
std::optional<std::int64_t> parse_max_step_count(const std::string& scontrol_config);

/// The cluster's MaxStepCount, asked of `scontrol show config` (bounded wait; `scratch`
/// holds its answer); nullopt when scontrol cannot tell.
std::optional<std::int64_t> cluster_max_step_count(const std::string& scratch);

/// The warning for a study of `trials` trials launched one job step each, or "" when
/// they fit below `max_steps`.
std::string step_count_warning(std::uint64_t trials, std::int64_t max_steps);

}  // namespace slurmtune::runtime
