#include "core/schedulers/early_stopping/hyperband_scheduler.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {

HyperbandScheduler::HyperbandScheduler(const SchedulerSpec& spec, Mode mode)
    : Scheduler(mode), max_t_(spec.max_t), eta_(spec.reduction_factor) {
  const auto rungs = geometric_milestones(spec.grace_period, eta_, max_t_);
  if (rungs.empty()) throw InputError("scheduler: hyperband needs grace_period <= max_t");
  s_max_ = static_cast<int>(rungs.size()) - 1;
}

std::size_t HyperbandScheduler::bracket_size(int s) const {
  return static_cast<std::size_t>(
      std::ceil(static_cast<double>(s_max_ + 1) / (s + 1) * std::pow(eta_, s)));
}

double HyperbandScheduler::rung_budget(int s, int i) const {
  return max_t_ * std::pow(eta_, i - s);
}

void HyperbandScheduler::open_bracket() {
  const int s =
      brackets_.empty() ? s_max_ : (brackets_.back().s == 0 ? s_max_ : brackets_.back().s - 1);
  Bracket b;
  b.s = s;
  b.target = bracket_size(s);
  brackets_.push_back(std::move(b));
}

void HyperbandScheduler::add_trial(TrialId trial, std::optional<int> bracket) {
  int index = 0;
  if (bracket) {
    // Replay: the recorded bracket, opening brackets up to it if needed.
    if (*bracket < 0) throw InputError("trial " + std::to_string(trial) + ": bracket must be >= 0");
    while (static_cast<int>(brackets_.size()) <= *bracket)
      open_bracket();
    index = *bracket;
  } else {
    if (brackets_.empty() || brackets_.back().full) open_bracket();
    index = static_cast<int>(brackets_.size()) - 1;
  }
  Bracket& b = brackets_[static_cast<std::size_t>(index)];
  ++b.members;
  ++b.running;
  if (b.members >= b.target) b.full = true;
  trials_.insert_or_assign(trial, TrialState{index, true});
}

int HyperbandScheduler::bracket_of(TrialId trial) const {
  const auto it = trials_.find(trial);
  return it == trials_.end() ? 0 : it->second.bracket;
}

ReportOutcome HyperbandScheduler::report(TrialId trial, double step, double value) {
  const auto it = trials_.find(trial);
  if (it == trials_.end()) throw_unknown_trial(trial);
  if (!it->second.running) return ReportOutcome{};
  Bracket& b = brackets_[static_cast<std::size_t>(it->second.bracket)];
  const double budget = rung_budget(b.s, b.rung);
  if (step < budget) return ReportOutcome{};
  ReportOutcome outcome{SchedulerDecision::Pause, b.rung, budget, {}, false, {}, {}, {}};
  if (b.rung == b.s) {
    outcome.decision = SchedulerDecision::Stop;  // the last rung runs to max_t
    return outcome;
  }
  it->second.running = false;
  --b.running;
  const double s = score(value);
  b.arrived.emplace_back(std::isnan(s) ? -HUGE_VAL : s, trial);
  maybe_advance(it->second.bracket);
  return outcome;
}

void HyperbandScheduler::end_trial(TrialId trial, TrialEnd, std::optional<Observation>) {
  const auto it = trials_.find(trial);
  if (it == trials_.end() || !it->second.running) return;
  it->second.running = false;
  --brackets_[static_cast<std::size_t>(it->second.bracket)].running;
  maybe_advance(it->second.bracket);
}

void HyperbandScheduler::maybe_advance(int index) {
  Bracket& b = brackets_[static_cast<std::size_t>(index)];
  if (!b.full || b.running > 0 || b.arrived.empty()) return;
  // Best first; on equal scores the earlier trial wins.
  std::sort(b.arrived.begin(), b.arrived.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  const auto keep = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::floor(static_cast<double>(b.arrived.size()) / eta_)));
  ++b.rung;
  for (std::size_t k = 0; k < b.arrived.size(); ++k) {
    const TrialId trial = b.arrived[k].second;
    if (k < keep) {
      trials_.at(trial).running = true;
      ++b.running;
      resumable_.push_back(
          Job{Job::Kind::Resume, trial, rung_budget(b.s, b.rung), std::nullopt, std::nullopt});
    } else {
      dropped_.push_back(trial);
    }
  }
  b.arrived.clear();
}

std::optional<Job> HyperbandScheduler::next_job(bool may_start_new) {
  if (!resumable_.empty()) {
    const Job job = resumable_.front();
    resumable_.pop_front();
    return job;
  }
  if (!may_start_new) return std::nullopt;
  const int s =
      (brackets_.empty() || brackets_.back().full)
          ? (brackets_.empty() || brackets_.back().s == 0 ? s_max_ : brackets_.back().s - 1)
          : brackets_.back().s;
  return Job{Job::Kind::Start, 0, rung_budget(s, 0), std::nullopt, std::nullopt};
}

void HyperbandScheduler::close_admissions() {
  if (closed_) return;
  closed_ = true;
  // A bracket cut short by max_trials halves what it has.
  for (std::size_t k = 0; k < brackets_.size(); ++k) {
    brackets_[k].full = true;
    maybe_advance(static_cast<int>(k));
  }
}

std::vector<TrialId> HyperbandScheduler::take_dropped() {
  std::vector<TrialId> out;
  out.swap(dropped_);
  return out;
}

SLURMTUNE_STATE(HyperbandScheduler, brackets_, trials_, resumable_, dropped_, closed_)

}  // namespace slurmtune::core
