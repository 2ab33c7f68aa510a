#include "core/study/study_controller.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/study/failure_text.hpp"

namespace slurmtune::core {

std::string_view to_string(TrialLaunch::Kind kind) {
  switch (kind) {
    case TrialLaunch::Kind::Start:
      return "start";
    case TrialLaunch::Kind::Resume:
      return "resume";
    case TrialLaunch::Kind::Retry:
      return "retry";
    case TrialLaunch::Kind::Restart:
      return "restart";
  }
  return "?";
}

std::string_view to_string(Instruction instruction) {
  switch (instruction) {
    case Instruction::Continue:
      return "continue";
    case Instruction::Stop:
      return "stop";
    case Instruction::Pause:
      return "pause";
    case Instruction::Complete:
      return "complete";
    case Instruction::Suspend:
      return "suspend";
  }
  return "?";
}

std::string_view decision_word(Instruction instruction) {
  switch (instruction) {
    case Instruction::Continue:
      return "continue";
    case Instruction::Pause:
    case Instruction::Suspend:
      return "pause";
    case Instruction::Stop:
    case Instruction::Complete:
      return "stop";
  }
  return "?";
}

std::uint64_t trial_cap(const StudySpec& spec) {
  if (spec.sampler.kind != SamplerKind::Grid) return spec.max_trials;
  return std::min(spec.max_trials, ConfigSampler(spec.space, SamplerKind::Grid, 0).grid_size());
}

StudyController::StudyController(const StudySpec& spec, std::unique_ptr<Scheduler> scheduler,
                                 std::unique_ptr<Suggester> suggester, StudyObserver& observer,
                                 const StudyResumePoint* resumed)
    : spec_(spec),
      scheduler_(std::move(scheduler)),
      suggester_(std::move(suggester)),
      observer_(observer),
      max_trials_(trial_cap(spec)),
      best_(spec.mode) {
  connect_model(*scheduler_, *suggester_);
  if (!resumed) return;
  configs_ = resumed->configs;
  counts_ = resumed->counts;
  counts_.running = 0;
  counts_.started = resumed->started;
  counts_.paused = resumed->paused.size();
  failures_ = resumed->failures;
  for (const auto& [trial, step] : resumed->last_step)
    book(trial).last_step = step;
  closed_ = resumed->admissions_closed;
  // A study resumed with room for more trials (max_trials raised with --allow-changes,
  // a time budget that starts anew) takes them: admissions are open again.
  if (closed_ && counts_.started < max_trials_) {
    closed_ = false;
    scheduler_->open_admissions();
  }
  for (const BestSoFar& b : resumed->best_values)
    best_.note(b.trial, b.step, b.value);
  for (const TrialId trial : resumed->restart) {
    const auto failed = failures_.find(trial);
    relaunch_.push_back(TrialLaunch{TrialLaunch::Kind::Restart, trial, config_of(trial),
                                    failed == failures_.end() ? 0 : failed->second});
  }
}

bool StudyController::may_admit(double elapsed_s) const {
  return !halted_ && counts_.started < max_trials_ &&
         !(spec_.time_budget_s && elapsed_s >= *spec_.time_budget_s);
}

double StudyController::last_step(TrialId trial) const {
  const TrialBook* b = find_book(trial);
  return b && b->last_step ? *b->last_step : 0.0;
}

std::optional<TrialLaunch> StudyController::next_launch(double elapsed_s,
                                                        const FitsBeforeEnd& fits) {
  awaiting_suggestion_ = false;
  if (shutting_down_) return std::nullopt;
  check_budget(elapsed_s);
  held_for_clock_ = false;
  const auto fitting = [&](double step) {
    if (!fits || fits(step)) return true;
    held_for_clock_ = true;
    return false;
  };
  // Retries and restarts first, in order; one that cannot reach its next checkpoint
  // before the allocation ends waits (for the next session, in practice).
  for (auto it = relaunch_.begin(); it != relaunch_.end(); ++it) {
    if (launch_holds_.contains(it->trial) || !fitting(last_step(it->trial))) continue;
    TrialLaunch launch = std::move(*it);
    relaunch_.erase(it);
    set_live(launch.trial, true);
    ++counts_.running;
    return launch;
  }
  const bool admit = may_admit(elapsed_s);
  if (!admit && !closed_) close_admissions();
  const bool may_start = admit && fitting(0);
  // A suggestion made ahead on the sampler's thread (suggest_ahead) that is not ready
  // yet: this slot takes a promotion if there is one, or waits for it.
  awaiting_suggestion_ = may_start && !suggester_->ready(counts_.started);
  const auto job = scheduler_->next_job(may_start && !awaiting_suggestion_);
  if (!job) return std::nullopt;
  TrialLaunch launch;
  if (job->kind == Job::Kind::Start) {
    launch.trial = counts_.started++;
    Suggestion suggestion = suggester_->suggest(launch.trial);
    configs_.push_back(suggestion.config);
    launch.config = std::move(suggestion.config);
    scheduler_->add_trial(launch.trial, std::nullopt);
    scheduler_->trial_configured(launch.trial, launch.config);
    observer_.trial_started(launch.trial, launch.config, scheduler_->bracket_of(launch.trial),
                            suggestion.info, now_);
    suggester_->began_at(launch.trial, 0, now_);
  } else {
    launch.kind = TrialLaunch::Kind::Resume;
    launch.trial = job->trial;
    launch.config = config_of(launch.trial);
    suggester_->resumed(launch.trial);
    const auto failed = failures_.find(launch.trial);
    launch.attempt = failed == failures_.end() ? 0 : failed->second;
    // Recorded when the scheduler decided it.
    observer_.trial_resumed(launch.trial, job->reason ? &*job->reason : nullptr, now_);
    suggester_->began_at(launch.trial, last_step(launch.trial), now_);
    const TrialBook* running = find_book(launch.trial);
    const bool still_live = running && running->live;
    if (!still_live && !fitting(last_step(launch.trial))) {
      // Promoted, but its next rung lies past the allocation's end: it is left running
      // in the results file, so the next session restarts it from its checkpoint.
      --counts_.paused;
      ++interrupted_;
      auto other = next_launch(elapsed_s, fits);
      held_for_clock_ = true;
      return other;
    }
    if (still_live) {
      // Promoted while its process is still leaving (checkpointing after the pause):
      // it runs again once that process has exited; this slot looks for other work.
      resume_when_exited_.insert(launch.trial);
      return next_launch(elapsed_s);
    }
    --counts_.paused;
    if (launch_holds_.contains(launch.trial)) {
      // Its files are not ready: it waits first in line for them; this slot looks on.
      relaunch_.push_back(std::move(launch));
      return next_launch(elapsed_s, fits);
    }
  }
  set_live(launch.trial, true);
  ++counts_.running;
  return launch;
}

ReportVerdict StudyController::report(TrialId trial, double step, double value) {
  return report(trial, step, std::vector<double>{value});
}

ReportVerdict StudyController::report(TrialId trial, double step,
                                      const std::vector<double>& metrics) {
  const double value = metrics.empty() ? std::nan("") : metrics.front();
  TrialBook& t = live(trial);
  ReportVerdict verdict;

  // A restarted trial re-runs the steps after its checkpoint, and a confused program may
  // repeat itself: the first report of a step is the one that counts (and the one a
  // resume replays), so later ones are neither judged nor recorded.
  if (t.told != Instruction::Continue || (t.last_step && step <= *t.last_step)) {
    verdict.duplicate = true;
    verdict.instruction = instruction(trial);
    // A trial re-running steps after a crash may reach one whose checkpoint was asked
    // for and never saved: it is asked again.
    verdict.outcome.checkpoint = wants_checkpoint(trial, step);
    return verdict;
  }
  suggester_->reported_at(trial, step, now_);
  suggester_->reported_metrics(trial, step, metrics);
  scheduler_->reported_metrics(trial, step, metrics);
  verdict.outcome = scheduler_->report(trial, step, value);
  suggester_->reported(trial, step, value, verdict.outcome);
  ++counts_.reports;
  t.last_step = step;
  t.last = Observation{step, value};
  if (verdict.outcome.checkpoint) t.wanted_checkpoint = step;
  apply_exploits();
  note_value(trial, step, value);
  const bool finished = step >= scheduler_->max_resource();
  switch (verdict.outcome.decision) {
    case SchedulerDecision::Continue:
      verdict.instruction = finished ? Instruction::Complete : Instruction::Continue;
      break;
    case SchedulerDecision::Pause:
    case SchedulerDecision::Exploit:  // it waits, paused, for its exploit resumption
      verdict.instruction = finished ? Instruction::Complete : Instruction::Pause;
      break;
    case SchedulerDecision::Stop:
      verdict.instruction = finished ? Instruction::Complete : Instruction::Stop;
      break;
  }
  t.told = verdict.instruction;
  if (t.told == Instruction::Continue) t.told = instruction(trial);
  verdict.instruction = t.told;
  return verdict;
}

void StudyController::apply_exploits() {
  for (auto& [trial, exploit] : scheduler_->take_exploits()) {
    configs_.at(trial) = exploit.config;
    // It goes on from the donor's step: reports after it count again.
    TrialBook& b = book(trial);
    b.last_step = exploit.donor_step;
    b.wanted_checkpoint.reset();
    if (hold_exploited_) hold_launch(trial);
    observer_.trial_exploited(trial, exploit);
  }
}

void StudyController::expect_checkpoint(TrialId trial, double step) {
  book(trial).wanted_checkpoint = step;
}

bool StudyController::wants_checkpoint(TrialId trial, double step) const {
  const TrialBook* b = find_book(trial);
  return b && b->wanted_checkpoint && step >= *b->wanted_checkpoint;
}

void StudyController::checkpoint_saved(TrialId trial, double step) {
  if (trial < books_.size()) books_[trial].wanted_checkpoint.reset();
  scheduler_->checkpoint_saved(trial, step);
  observer_.checkpoint_saved(trial, step);
  apply_exploits();  // synchronous PBT perturbs once every checkpoint is in
}

Instruction StudyController::instruction(TrialId trial) const {
  const Instruction told = live(trial).told;
  if (told != Instruction::Continue) return told;
  if (shutting_down_ || evicted_.contains(trial)) return Instruction::Suspend;
  if (halted_) return Instruction::Stop;
  return Instruction::Continue;
}

ExitMeaning StudyController::trial_exited(TrialId trial, bool clean, const std::string& error) {
  // A checkpoint the scheduler asked for and did not get will not come now.
  if (const TrialBook* b = find_book(trial); b && b->wanted_checkpoint)
    checkpoint_saved(trial, NAN);
  const Instruction told = instruction(trial);
  const bool evicted = evicted_.erase(trial) > 0;
  set_live(trial, false);
  --counts_.running;
  switch (told) {
    case Instruction::Complete:
      end(trial, TrialEnd::Completed, {});
      return ExitMeaning::Ended;
    case Instruction::Stop:
      end(trial, TrialEnd::Stopped, halted_ ? halt_reason_ : std::string());
      return ExitMeaning::Ended;
    case Instruction::Pause:
      if (resume_when_exited_.erase(trial)) {
        const auto failed = failures_.find(trial);
        relaunch_.push_back(TrialLaunch{TrialLaunch::Kind::Resume, trial, config_of(trial),
                                        failed == failures_.end() ? 0 : failed->second});
        return ExitMeaning::Paused;
      }
      ++counts_.paused;
      collect_dropped();
      return ExitMeaning::Paused;
    case Instruction::Suspend:
      if (evicted && !shutting_down_) {
        const auto failed = failures_.find(trial);
        relaunch_.push_back(TrialLaunch{TrialLaunch::Kind::Restart, trial, config_of(trial),
                                        failed == failures_.end() ? 0 : failed->second});
        return ExitMeaning::Unfinished;
      }
      ++interrupted_;
      return ExitMeaning::Unfinished;
    case Instruction::Continue:
      break;
  }
  if (clean) {
    // Said once, where the study's log shows it: a command that never reports (no client
    // call, the wrong metric name) leaves a study of "completed" trials with no values.
    end(trial, TrialEnd::Completed,
        book(trial).last_step ? std::string()
                              : "exited 0 without a single report of " + spec_.metric +
                                    "; does its command call the report client (doc/protocol.md)?");
    return ExitMeaning::Ended;
  }
  if (fails_fast(error)) {
    end(trial, TrialEnd::Failed, error);
    failed_fast_ = true;
    halt("the first " + std::to_string(alike_failures_) + " attempts failed alike (" +
         alike_failure_ + "); fix the trial command and run again");
    return ExitMeaning::Ended;
  }
  std::uint64_t& failed = failures_[trial];
  if (static_cast<std::int64_t>(failed) < spec_.trial.max_failures) {
    ++failed;
    ++counts_.retries;
    observer_.trial_retried(trial, error);
    relaunch_.push_back(TrialLaunch{TrialLaunch::Kind::Retry, trial, config_of(trial), failed});
    return ExitMeaning::Retried;
  }
  end(trial, TrialEnd::Failed, error);
  return ExitMeaning::Ended;
}

bool StudyController::fails_fast(const std::string& error) {
  // Once any report has arrived the command works: later failures are the trials' own.
  if (fail_fast_after_ == 0 || counts_.reports > 0 || halted_) return false;
  const std::string summary = failure_summary(error);
  if (summary == alike_failure_) {
    ++alike_failures_;
  } else {
    alike_failure_ = summary;
    alike_failures_ = 1;
  }
  return alike_failures_ >= fail_fast_after_;
}

bool StudyController::check_budget(double elapsed_s) {
  if (halted_ || !spec_.time_budget_s || elapsed_s < *spec_.time_budget_s) return false;
  halt("time budget of " + format_double(*spec_.time_budget_s) + " s reached");
  return true;
}

void StudyController::begin_shutdown() {
  shutting_down_ = true;
}

void StudyController::evict(TrialId trial) {
  live(trial);  // throws for a trial that is not running
  evicted_.insert(trial);
}

void StudyController::release_launch(TrialId trial) {
  const auto held = launch_holds_.find(trial);
  if (held != launch_holds_.end() && --held->second == 0) launch_holds_.erase(held);
}

void StudyController::defer_launch(TrialLaunch launch) {
  const TrialBook* launched = find_book(launch.trial);
  if (!launched || !launched->live)
    throw UsageError("StudyController::defer_launch: trial " + std::to_string(launch.trial) +
                     " was not launched");
  set_live(launch.trial, false);
  --counts_.running;
  hold_launch(launch.trial);
  relaunch_.push_back(std::move(launch));
}

bool StudyController::more_work_left() const {
  if (halted_) return interrupted_ > 0;
  return !closed_ || !relaunch_.empty() || interrupted_ > 0 || counts_.paused > 0 ||
         live_count_ > 0;
}

std::vector<TrialId> StudyController::running() const {
  std::vector<TrialId> ids;
  ids.reserve(live_count_);
  for (TrialId id = 0; id < books_.size(); ++id)
    if (books_[id].live) ids.push_back(id);
  return ids;
}

void StudyController::close_admissions() {
  closed_ = true;
  scheduler_->close_admissions();
  observer_.admissions_closed();
  collect_dropped();
}

void StudyController::halt(const std::string& reason) {
  halted_ = true;
  halt_reason_ = reason;
  if (!closed_) close_admissions();
  // Retries and restarts waiting for a slot will not run: the study is over.
  for (const TrialLaunch& waiting : relaunch_)
    end(waiting.trial, TrialEnd::Stopped, reason);
  relaunch_.clear();
}

void StudyController::collect_dropped() {
  for (const TrialId trial : scheduler_->take_dropped()) {
    --counts_.paused;
    ++counts_.stopped;
    observer_.trial_ended(trial, TrialEnd::Stopped, kDroppedByScheduler);
  }
}

void StudyController::note_value(TrialId trial, double step, double value) {
  if (std::isnan(value)) return;
  const bool minimise = spec_.mode == Mode::Min;
  best_.note(trial, step, value);
  const auto& threshold = spec_.metric_threshold;
  if (threshold && !halted_ && (minimise ? value <= *threshold : value >= *threshold))
    halt("trial " + std::to_string(trial) + " reached the metric threshold " +
         format_double(*threshold));
}

void StudyController::end(TrialId trial, TrialEnd how, const std::string& error) {
  // A deque's references stay valid as it grows: `b` outlives the calls below.
  TrialBook& b = book(trial);
  scheduler_->end_trial(trial, how, b.last);
  b.wanted_checkpoint.reset();
  apply_exploits();  // synchronous PBT: the trials that waited for this one
  suggester_->ended(trial, how);
  switch (how) {
    case TrialEnd::Completed:
      ++counts_.completed;
      break;
    case TrialEnd::Stopped:
      ++counts_.stopped;
      break;
    case TrialEnd::Failed:
      ++counts_.failed;
      best_.forget(trial);
      break;
  }
  b.last.reset();  // what an ended trial leaves: its slot, not live
  b.last_step.reset();
  observer_.trial_ended(trial, how, error);
  collect_dropped();
}

const StudyController::TrialBook& StudyController::live(TrialId trial) const {
  const TrialBook* b = find_book(trial);
  if (!b || !b->live)
    throw UsageError("StudyController: trial " + std::to_string(trial) + " is not running");
  return *b;
}

StudyController::TrialBook& StudyController::book(TrialId trial) {
  if (trial >= books_.size()) books_.resize(static_cast<std::size_t>(trial) + 1);
  return books_[trial];
}

const StudyController::TrialBook* StudyController::find_book(TrialId trial) const {
  return trial < books_.size() ? &books_[trial] : nullptr;
}

void StudyController::set_live(TrialId trial, bool live) {
  TrialBook& b = book(trial);
  if (live) b.told = Instruction::Continue;  // a launch's verdicts start afresh
  if (b.live == live) return;
  b.live = live;
  live ? ++live_count_ : --live_count_;
}

StudyController::TrialBook& StudyController::live(TrialId trial) {
  return const_cast<TrialBook&>(std::as_const(*this).live(trial));
}

}  // namespace slurmtune::core
