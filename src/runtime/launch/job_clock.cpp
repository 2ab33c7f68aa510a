#include "runtime/launch/job_clock.hpp"

#include <ctime>

#include "core/study/allocation_clock.hpp"
#include "runtime/launch/child_process.hpp"

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

void SessionClock::set_end(double time_left_s, double end_margin_s, double max_resource) {
  allocation_.emplace(max_resource);
  usable_until_s_ = elapsed_s() + time_left_s - end_margin_s;
}

std::optional<double> SessionClock::usable_left_s() const {
  if (!allocation_) return std::nullopt;
  return usable_until_s_ - elapsed_s();
}

core::FitsBeforeEnd SessionClock::fits_before_end() const {
  if (!allocation_) return {};
  return [this](double step) { return allocation_->fits(step, *usable_left_s()); };
}

std::optional<double> SessionClock::seconds_to_first_rung() const {
  if (!allocation_) return std::nullopt;
  return allocation_->seconds_to_next_milestone(0);
}

void SessionClock::attempt_started(core::TrialId trial, double from_step) {
  if (allocation_) allocation_->attempt_started(trial, from_step, elapsed_s());
}

void SessionClock::reported(core::TrialId trial, double step, std::optional<double> milestone) {
  if (allocation_) allocation_->reported(trial, step, elapsed_s(), milestone);
}

void SessionClock::attempt_ended(core::TrialId trial) {
  if (allocation_) allocation_->attempt_ended(trial);
}

}  // namespace slurmtune::runtime
