#include "core/study/allocation_clock.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace slurmtune::core {
namespace {
constexpr std::size_t kSamples = 512;
}  // namespace

AllocationClock::AllocationClock(double max_resource) : max_resource_(max_resource) {}

void AllocationClock::attempt_started(TrialId trial, double from_step, double time_s) {
  if (trial >= attempts_.size()) attempts_.resize(static_cast<std::size_t>(trial) + 1);
  attempts_[trial] = Attempt{true, from_step, time_s, std::nullopt, std::nullopt};
}

void AllocationClock::reported(TrialId trial, double step, double time_s,
                               std::optional<double> milestone) {
  if (milestone) milestones_.insert(*milestone);
  if (trial >= attempts_.size() || !attempts_[trial].open) return;
  Attempt& a = attempts_[trial];
  if (a.last_step && step > *a.last_step && time_s >= *a.last_s) {
    keep(seconds_per_unit_, next_pace_, (time_s - *a.last_s) / (step - *a.last_step));
  } else if (!a.last_step && step > a.from_step && time_s >= a.started_s) {
    // The first report: start-up plus (step - from_step) steps at the pace measured so
    // far. With no pace yet, the whole wait counts as steps (an overestimate that the
    // next reports correct).
    const double elapsed = time_s - a.started_s;
    if (seconds_per_unit_.empty())
      keep(seconds_per_unit_, next_pace_, elapsed / (step - a.from_step));
    else
      keep(startup_s_, next_startup_,
           std::max(0.0, elapsed - median(seconds_per_unit_) * (step - a.from_step)));
  }
  a.last_step = step;
  a.last_s = time_s;
}

void AllocationClock::attempt_ended(TrialId trial) {
  if (trial < attempts_.size()) attempts_[trial] = Attempt{};
}

double AllocationClock::next_milestone(double step) const {
  const auto above = milestones_.upper_bound(step);
  return above == milestones_.end() ? max_resource_ : std::min(*above, max_resource_);
}

std::optional<double> AllocationClock::seconds_to_next_milestone(double step) const {
  if (seconds_per_unit_.empty()) return std::nullopt;
  const double startup = startup_s_.empty() ? 0 : median(startup_s_);
  return startup + median(seconds_per_unit_) * std::max(0.0, next_milestone(step) - step);
}

bool AllocationClock::fits(double step, double time_left_s) const {
  const auto needed = seconds_to_next_milestone(step);
  return !needed || *needed <= time_left_s;
}

double AllocationClock::median(std::vector<double> samples) {
  const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), middle, samples.end());
  return *middle;
}

void AllocationClock::keep(std::vector<double>& samples, std::size_t& next, double value) {
  if (!std::isfinite(value)) return;
  if (samples.size() < kSamples) {
    samples.push_back(value);
    return;
  }
  samples[next] = value;
  next = (next + 1) % kSamples;
}

std::optional<double> parse_slurm_time_left(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.remove_suffix(1);
  const auto whole = [](std::string_view part) -> std::optional<long> {
    long v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v < 0)
      return std::nullopt;
    return v;
  };
  long days = 0;
  if (const auto dash = text.find('-'); dash != std::string_view::npos) {
    const auto d = whole(text.substr(0, dash));
    if (!d) return std::nullopt;
    days = *d;
    text = text.substr(dash + 1);
  }
  std::vector<long> fields;
  for (std::size_t start = 0;;) {
    const auto colon = text.find(':', start);
    const auto v = whole(text.substr(start, colon - start));
    if (!v || fields.size() == 3) return std::nullopt;
    fields.push_back(*v);
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  long seconds = 0;
  if (days > 0 && fields.size() == 1)  // "D-HH"
    seconds = fields[0] * 3600;
  else if (days > 0 && fields.size() == 2)  // "D-HH:MM"
    seconds = fields[0] * 3600 + fields[1] * 60;
  else if (fields.size() == 3)  // "[D-]HH:MM:SS"
    seconds = fields[0] * 3600 + fields[1] * 60 + fields[2];
  else if (fields.size() == 2)  // "MM:SS"
    seconds = fields[0] * 60 + fields[1];
  else
    return std::nullopt;  // a bare number is ambiguous (squeue never prints one)
  return static_cast<double>(days * 86400 + seconds);
}

}  // namespace slurmtune::core
