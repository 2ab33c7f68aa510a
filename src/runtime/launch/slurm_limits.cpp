#include "runtime/launch/slurm_limits.hpp"

#include <sstream>

#include "runtime/launch/child_process.hpp"

namespace slurmtune::runtime {

std::optional<std::int64_t> parse_max_step_count(const std::string& scontrol_config) {
  std::istringstream lines(scontrol_config);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("MaxStepCount")) continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) return std::nullopt;
    try {
      return std::stoll(line.substr(eq + 1));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<std::int64_t> cluster_max_step_count(const std::string& scratch) {
  constexpr double kScontrolWait_s = 5;  // slurmctld may not answer: the study goes on
  const auto out = capture_output({"scontrol", "show", "config"}, scratch, kScontrolWait_s);
  return out.text ? parse_max_step_count(*out.text) : std::nullopt;
}

std::string step_count_warning(std::uint64_t trials, std::int64_t max_steps) {
  if (static_cast<std::int64_t>(trials) < max_steps) return {};
  return "max_trials = " + std::to_string(trials) + " needs at least as many job steps (one per " +
         "trial), but the cluster's MaxStepCount is " + std::to_string(max_steps) +
         ": the job cannot start more, and the study would stop short. Set [resources] " +
         "launch = \"worker\" (one step per node for all trials)";
}

}  // namespace slurmtune::runtime
