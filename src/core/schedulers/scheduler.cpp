#include "core/schedulers/scheduler.hpp"

#include <string>

#include "core/error.hpp"

namespace slurmtune::core {

std::string_view to_string(Decision decision) {
  switch (decision) {
    case Decision::Continue:
      return "continue";
    case Decision::Stop:
      return "stop";
    case Decision::Pause:
      return "pause";
    case Decision::Exploit:
      return "exploit";
  }
  return "?";
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
  return Job{Job::Kind::Start, 0, max_resource(), std::nullopt};
}

}  // namespace slurmtune::core
