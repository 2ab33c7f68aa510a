#pragma once
// A trial's argv from the study's `[trial] command` template. Placeholders are replaced
// inside each argument; the result goes to execve as it is, never through a shell, so a
// parameter value cannot inject a command however it is spelled.
#include <string>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/space/search_space.hpp"

namespace slurmtune::core {

/// Replaces `{name}` by the trial's value of parameter `name` (core::to_text),
/// `{trial_id}` by the trial id and `{trial_dir}` by its directory; `{{` and `}}` stand
/// for literal braces. An argument that names a parameter the configuration does not
/// have (a conditional one whose `when` does not hold) is left out whole, so write
/// `--momentum={momentum}` as one argument. Throws InputError naming the argument for an unknown
/// placeholder or an unclosed brace (the study file reader has already refused both).
std::vector<std::string> expand_command(const std::vector<std::string>& command,
                                        const SearchSpace& space, const Configuration& config,
                                        TrialId trial, const std::string& trial_dir);

}  // namespace slurmtune::core
