#include "core/schedulers/scheduler.hpp"

#include <string>

#include "core/error.hpp"

namespace slurmtune::core {

std::string_view to_string(SchedulerDecision decision) {
  switch (decision) {
    case SchedulerDecision::Continue:
      return "continue";
    case SchedulerDecision::Stop:
      return "stop";
    case SchedulerDecision::Pause:
      return "pause";
    case SchedulerDecision::Exploit:
      return "exploit";
  }
  return "?";
}

std::string_view to_string(ResumeReason::Rule rule) {
  return rule == ResumeReason::Rule::Model ? "model" : "promotion";
}

std::string_view to_string(TrialEnd end) {
  switch (end) {
    case TrialEnd::Completed:
      return "completed";
    case TrialEnd::Stopped:
      return "stopped";
    case TrialEnd::Failed:
      return "failed";
  }
  return "?";
}

std::optional<TrialEnd> trial_end_from_string(std::string_view word) {
  for (const auto end : {TrialEnd::Completed, TrialEnd::Stopped, TrialEnd::Failed})
    if (to_string(end) == word) return end;
  return std::nullopt;
}

void Scheduler::throw_unknown_trial(TrialId trial) {
  throw InputError("trial " + std::to_string(trial) + " reported before it was started");
}

std::optional<Job> Scheduler::next_job(bool may_start_new) {
  if (!may_start_new) return std::nullopt;
  return Job{Job::Kind::Start, 0, max_resource(), std::nullopt, std::nullopt};
}

}  // namespace slurmtune::core
