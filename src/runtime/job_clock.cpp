#include "runtime/job_clock.hpp"

#include <ctime>

#include "core/study/allocation_clock.hpp"
#include "runtime/child_process.hpp"

namespace slurmtune::runtime {
namespace {

std::string lookup(const std::map<std::string, std::string>& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

// squeue answers from slurmctld; a controller that does not answer must not stall the
// orchestrator's start.
constexpr double kSqueueWait_s = 10;

}  // namespace

TimeLeft slurm_time_left(const std::map<std::string, std::string>& env, const std::string& scratch,
                         const std::string& squeue) {
  const std::string job = lookup(env, "SLURM_JOB_ID");
  if (job.empty()) return {std::nullopt, "not in a Slurm job"};
  if (const std::string end = lookup(env, "SLURM_JOB_END_TIME"); !end.empty()) {
    try {
      return {std::stod(end) - static_cast<double>(std::time(nullptr)), "SLURM_JOB_END_TIME"};
    } catch (const std::exception&) {
      // Malformed: ask squeue instead.
    }
  }
  const CommandOutput output =
      capture_output({squeue, "-h", "-j", job, "-o", "%L"}, scratch, kSqueueWait_s);
  if (!output.text) return {std::nullopt, output.error};
  std::string answer = *output.text;
  while (!answer.empty() && (answer.back() == '\n' || answer.back() == ' '))
    answer.pop_back();
  const auto seconds = core::parse_slurm_time_left(answer);
  if (!seconds) return {std::nullopt, "squeue: no time limit (" + answer + ")"};
  return {seconds, "squeue"};
}

}  // namespace slurmtune::runtime
