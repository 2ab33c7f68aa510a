#include "core/simulation/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/simulation/recorded_objective.hpp"
#include "core/simulation/simulated_trial.hpp"
#include "core/simulation/synthetic_objective.hpp"
#include "core/study/allocation_clock.hpp"
#include "core/study/decision_state.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/suggester_factory.hpp"

namespace slurmtune::core {
namespace {

std::unique_ptr<Objective> make_objective(const StudySpec& spec, const SimulationOptions& options) {
  if (options.curves && spec.scheduler.type == SchedulerType::Pbt)
    throw InputError(
        "simulate: pbt needs a curve for every configuration a trial switches to, and a "
        "recorded table holds whole runs only; simulate pbt on a synthetic objective");
  if (options.curves)
    return std::make_unique<RecordedObjective>(*options.curves, spec, options.reuse_configurations,
                                               options.nearest_random_draws);
  return std::make_unique<SyntheticObjective>(spec);
}

struct StepDone {
  double time_s;
  std::uint64_t sequence;  // breaks time ties in event order: deterministic
  std::size_t worker;
  bool operator>(const StepDone& o) const {
    return time_s != o.time_s ? time_s > o.time_s : sequence > o.sequence;
  }
};

class Simulator {
 public:
  Simulator(const StudySpec& spec, const SimulationOptions& options, SimulationObserver* observer)
      : spec_(spec),
        observer_(observer ? observer : &silent_),
        objective_(make_objective(spec, options)),
        scheduler_(make_scheduler(spec.scheduler, spec.mode, spec.seed, spec.name)),
        suggester_(make_suggester(spec.space, spec.sampler, spec.mode == Mode::Max, spec.seed)),
        max_trials_(spec.max_trials),
        workers_(options.workers),
        busy_since_(options.workers, 0.0),
        decision_wait_(options.workers, 0.0),
        segment_since_(options.workers, 0.0),
        running_trial_(options.workers, 0),
        options_(options) {
    if (workers_ == 0) throw InputError("simulate: --workers must be at least 1");
    connect_model(*scheduler_, *suggester_);
    if (options.allocation_s) {
      if (!(*options.allocation_s > options.end_margin_s) || options.end_margin_s < 0)
        throw InputError("simulate: --allocation-s must exceed --end-margin (" +
                         format_double(options.end_margin_s) + " s)");
      costs_.emplace();
      costs_->allocations = 1;
      boundary_ = *options.allocation_s;
      if (options.allocation_clock) clock_.emplace(scheduler_->max_resource());
    }
    max_trials_ = std::min(max_trials_, objective_->capacity());
    progress_every_ = options.progress_every ? options.progress_every
                                             : std::max<std::uint64_t>(1, max_trials_ / 10);
    trials_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(max_trials_, 1u << 24)));
  }

  SimulationSummary run() {
    for (std::size_t w = 0; w < workers_; ++w)
      idle_.push_back(w);
    assign_idle(0.0);
    for (;;) {
      if (costs_) {
        // The allocation ends before the next event (or with nothing running while work
        // was held for it): kill what runs and go on in the next allocation.
        const bool idle_with_work = events_.empty() && (!restart_.empty() || held_now_);
        if (idle_with_work || (!events_.empty() && events_.top().time_s > boundary_)) {
          end_allocation();
          continue;
        }
      }
      if (events_.empty()) break;
      if (spec_.time_budget_s && events_.top().time_s > *spec_.time_budget_s) {
        stop_everything(*spec_.time_budget_s);
        break;
      }
      const StepDone event = events_.top();
      events_.pop();
      handle_step(event);
      now_ = event.time_s;
      if (halted_) {
        stop_everything(now_);
        break;
      }
      assign_idle(now_);
      if (options_.state_round_trip_every && ++events_done_ % options_.state_round_trip_every == 0)
        round_trip_state();
    }
    collect_dropped(now_);
    return summary();
  }

 private:
  // The decision state, written and read back into a scheduler and sampler made anew.
  void round_trip_state() {
    const std::string bytes = save_decision_state(*scheduler_, *suggester_);
    auto scheduler = make_scheduler(spec_.scheduler, spec_.mode, spec_.seed, spec_.name);
    auto suggester =
        make_suggester(spec_.space, spec_.sampler, spec_.mode == Mode::Max, spec_.seed);
    load_decision_state(bytes, *scheduler, *suggester);
    scheduler_ = std::move(scheduler);
    suggester_ = std::move(suggester);
    connect_model(*scheduler_, *suggester_);
  }

  // Seconds until the running trials are told to suspend (the end less the margin).
  double usable_left(double time_s) const { return boundary_ - options_.end_margin_s - time_s; }

  // The allocation's clock: may work resuming after `step` start now?
  bool fits(double step, double time_s) {
    if (!costs_) return true;
    const bool ok = usable_left(time_s) > 0 && (!clock_ || clock_->fits(step, usable_left(time_s)));
    if (!ok) held_now_ = true;
    return ok;
  }

  // Worker-seconds of the allocation that began at `allocation_start_`, ending when its
  // last trial left.
  void charge(double end_s) {
    costs_->charged_s += (end_s - allocation_start_) * static_cast<double>(workers_);
  }

  void end_allocation() {
    check_progress();
    charge(events_.empty() ? std::max(last_departure_, allocation_start_) : boundary_);
    now_ = boundary_;
    while (!events_.empty()) {
      const StepDone event = events_.top();
      events_.pop();
      const TrialId trial = running_trial_[event.worker];
      SimulatedTrial& t = trials_[trial];
      costs_->lost_s += boundary_ - segment_since_[event.worker];
      ++costs_->killed;
      t.reports = t.checkpoint;
      t.step = t.checkpoint_step;
      has_next(t);  // the step after the checkpoint, run again
      restart_.push_back(trial);
      free_worker(event.worker, boundary_);
    }
    allocation_start_ = boundary_;
    boundary_ += *options_.allocation_s;
    ++costs_->allocations;
    held_now_ = false;
    // A new job is a new session: its clock starts unmeasured, so it always launches.
    if (clock_) clock_.emplace(scheduler_->max_resource());
    assign_idle(now_);
  }

  // Allocations in a row without a single judged report: a step (or start-up) longer
  // than an allocation would be killed and re-run forever, so the simulation ends.
  void check_progress() {
    static constexpr int kIdleAllocations = 3;
    idle_allocations_ =
        progress_.reports == reports_at_allocation_start_ ? idle_allocations_ + 1 : 0;
    reports_at_allocation_start_ = progress_.reports;
    if (idle_allocations_ >= kIdleAllocations)
      throw InputError("no trial reported in " + std::to_string(kIdleAllocations) +
                       " allocations in a row (" + format_double(*options_.allocation_s) +
                       " s, suspending " + format_double(options_.end_margin_s) +
                       " s before the end): a step or start-up that takes longer never "
                       "completes; use a longer --allocation-s");
  }

  // A trial killed, suspended or held earlier starts again from its checkpoint.
  bool restart_one(double time_s) {
    for (auto it = restart_.begin(); it != restart_.end(); ++it) {
      if (!fits(trials_[*it].checkpoint_step, time_s)) continue;
      const TrialId trial = *it;
      restart_.erase(it);
      launch(trial, time_s);  // its step is its checkpoint (reset when it left)
      return true;
    }
    return false;
  }

  void launch(TrialId trial, double time_s) {
    const std::size_t worker = idle_.back();
    idle_.pop_back();
    ++progress_.running;
    running_trial_[worker] = trial;
    busy_since_[worker] = time_s;
    segment_since_[worker] = time_s;
    if (clock_) clock_->attempt_started(trial, trials_[trial].step, time_s);
    if (costs_) costs_->startup_s += options_.startup_s;
    events_.push(StepDone{
        time_s + take_decision_wait(worker) + options_.startup_s + trials_[trial].next.seconds,
        sequence_++, worker});
  }

  // Fetches the trial's next report from its curve; false where the curve ends.
  bool has_next(SimulatedTrial& t) const {
    const auto next =
        objective_->report(t.curve, static_cast<TrialId>(&t - trials_.data()), t.reports);
    if (next) t.next = *next;
    return next.has_value();
  }

  bool may_start_new(double time_s) const {
    return !halted_ && progress_.started < max_trials_ &&
           !(spec_.time_budget_s && time_s >= *spec_.time_budget_s);
  }

  void assign_idle(double time_s) {
    while (!idle_.empty()) {
      if (costs_ && !restart_.empty() && restart_one(time_s)) continue;
      const bool admit = may_start_new(time_s);
      if (!admit && !closed_) {
        close_admissions(time_s);
        collect_dropped(time_s);
      }
      const auto job = scheduler_->next_job(admit && fits(0, time_s));
      if (!job) break;
      TrialId trial = job->trial;
      if (job->kind == Job::Kind::Start) {
        const auto started = start_trial(time_s);
        if (!started) continue;
        trial = *started;
        has_next(trials_.back());  // a recorded curve has at least one point
      } else {
        --progress_.paused;
        suggester_->resumed(trial);
        observer_->trial_resumed(trial, time_s, job->reason ? &*job->reason : nullptr);
        suggester_->began_at(trial, trials_[trial].step, time_s);
        if (job->exploit) exploit(trial, *job->exploit, time_s);
        if (!has_next(trials_[trial])) {  // promoted past the end of its recorded curve
          ++beyond_recorded_;
          end_at_recorded_end(trial, time_s);
          continue;
        }
        if (!fits(trials_[trial].step, time_s)) {  // promoted, but for the next allocation
          restart_.push_back(trial);
          continue;
        }
      }
      launch(trial, time_s);
      if (job->kind == Job::Kind::Start && progress_.started % progress_every_ == 0)
        observer_->progress(snapshot(time_s));
    }
  }

  void close_admissions(double time_s) {
    closed_ = true;
    scheduler_->close_admissions();
    observer_->admissions_closed(time_s);
  }

  void schedule_step(std::size_t worker, double time_s) {
    const SimulatedTrial& t = trials_[running_trial_[worker]];
    segment_since_[worker] = time_s;
    events_.push(
        StepDone{time_s + take_decision_wait(worker) + t.next.seconds, sequence_++, worker});
  }

  // The decision clock's reading (0 when decisions are free).
  double decision_clock() const {
    return options_.decision_clock ? options_.decision_clock() : 0.0;
  }

  // What the decision begun at `since` cost, owed by `worker` before its next step.
  void charge_decision(std::size_t worker, double since) {
    if (!options_.decision_clock) return;
    const double cost = std::max(0.0, options_.decision_clock() - since);
    decision_wait_[worker] += cost;
    decision_s_ += cost;
    ++decisions_charged_;
  }

  // A decision's cost that was measured elsewhere (a suggestion made ahead).
  void owe_decision(std::size_t worker, double cost) {
    if (!options_.decision_clock || !(cost > 0)) return;
    decision_wait_[worker] += cost;
    decision_s_ += cost;
  }

  double take_decision_wait(std::size_t worker) {
    return std::exchange(decision_wait_[worker], 0.0);
  }

  // The recorded run ended here (stopped, failed, or the table's last step): so does
  // the simulated trial, with the recorded status; nothing past it is invented.
  void end_at_recorded_end(TrialId trial, double time_s) {
    ++ended_as_recorded_;
    end_trial(trial, objective_->recorded_end(trials_[trial].curve), trials_[trial].value, time_s);
  }

  void handle_step(const StepDone& event) {
    const TrialId trial = running_trial_[event.worker];
    SimulatedTrial& t = trials_[trial];
    t.reports += 1;
    t.step = t.next.step;
    t.value = t.next.value;
    if (t.reports <= t.judged) {  // re-running steps lost when an earlier attempt was killed
      costs_->lost_s += event.time_s - segment_since_[event.worker];
      has_next(t);  // re-running what was reported before: the curve goes on
      schedule_step(event.worker, event.time_s);
      return;
    }
    t.judged = t.reports;
    const double value = t.value;
    const double decided_since = decision_clock();
    // Every metric column: the judged value, then the other objectives' (the objectives
    // come first among the study's metrics); NaN for metrics the objective does not make.
    std::vector<double> metrics(std::max<std::size_t>(spec_.metrics.size(), 1), std::nan(""));
    metrics[0] = value;
    for (std::size_t k = 0; k < t.next.others.size() && k + 1 < metrics.size(); ++k)
      metrics[k + 1] = t.next.others[k];
    suggester_->reported_at(trial, t.step, event.time_s);
    suggester_->reported_metrics(trial, t.step, metrics);
    scheduler_->reported_metrics(trial, t.step, metrics);
    const ReportOutcome outcome = scheduler_->report(trial, t.step, value);
    suggester_->reported(trial, t.step, value, outcome);
    charge_decision(event.worker, decided_since);
    ++progress_.reports;
    observer_->reported(trial, t.step, metrics, outcome, event.time_s);
    note_best(trial, t.step, value, event.time_s);
    if (outcome.rung) t.save_checkpoint();  // slurmtune asks for a checkpoint at every rung
    if (outcome.checkpoint) {
      t.keep_checkpoint();
      scheduler_->checkpoint_saved(trial, t.step);
      observer_->checkpoint_saved(trial, t.step, event.time_s);
    }
    take_clones();  // the exploits are applied when the trials resume (Job::exploit)
    if (clock_) clock_->reported(trial, t.step, event.time_s, outcome.milestone);
    const bool finished = t.step >= scheduler_->max_resource();
    if (outcome.decision == SchedulerDecision::Continue && !finished) {
      if (!has_next(t)) {  // the recorded run stopped here
        free_worker(event.worker, event.time_s);
        end_at_recorded_end(trial, event.time_s);
        return;
      }
      if (costs_ && usable_left(event.time_s) <= 0) {  // suspended: checkpoint and leave
        t.save_checkpoint();
        restart_.push_back(trial);
        free_worker(event.worker, event.time_s);
        return;
      }
      schedule_step(event.worker, event.time_s);
      return;
    }
    free_worker(event.worker, event.time_s);
    if ((outcome.decision == SchedulerDecision::Pause ||
         outcome.decision == SchedulerDecision::Exploit) &&
        !finished) {
      t.save_checkpoint();
      ++progress_.paused;
      collect_dropped(event.time_s);
      return;
    }
    end_trial(trial, finished ? TrialEnd::Completed : TrialEnd::Stopped, value, event.time_s);
  }

  // A new trial: the sampler suggests, the objective picks the curve it follows (a
  // recorded table: its configuration nearest to the suggestion). Nullopt when a finite
  // table has no configuration left.
  std::optional<TrialId> start_trial(double time_s) {
    const TrialId trial = progress_.started;
    const double suggested_since = decision_clock();
    const Suggestion suggestion = suggester_->suggest(trial);
    charge_decision(idle_.back(), suggested_since);  // the worker launch() takes
    // suggest_ahead: `run` makes this suggestion on the sampler's thread from the
    // previous start on; the worker waits for what of it is not done by now. As with
    // decisions made when asked, one worker's wait is not queued behind another's.
    owe_decision(idle_.back(), ahead_ready_at_ - time_s);
    const auto curve = objective_->draw(trial, suggestion);
    if (!curve) {
      max_trials_ = progress_.started;
      return std::nullopt;
    }
    ++progress_.started;
    trials_.push_back(SimulatedTrial{});
    trials_.back().curve = *curve;
    scheduler_->add_trial(trial, std::nullopt);
    const bool model_based = is_model_based(spec_.sampler.kind);
    const bool pbt = spec_.scheduler.type == SchedulerType::Pbt;
    // A configuration costs allocations: only when someone uses it.
    if (!model_based && !pbt && observer_ == &silent_) return trial;
    const Configuration config = objective_->configuration(*curve);
    if (pbt) scheduler_->trial_configured(trial, config);
    if (model_based && !(config == suggestion.config)) suggester_->started(trial, config);
    observer_->trial_started(trial, config, scheduler_->bracket_of(trial), suggestion.info, time_s);
    const double ahead_since = decision_clock();
    suggester_->began_at(trial, 0, time_s);  // where suggest_ahead makes the next suggestion
    if (spec_.sampler.suggest_ahead) ahead_ready_at_ = time_s + (decision_clock() - ahead_since);
    return trial;
  }

  // PBT: the exploits just decided clone their donors' checkpoints now.
  void take_clones() {
    for (const auto& decided : scheduler_->take_exploits()) {
      const Exploit& e = decided.second;
      const auto kept = trials_.at(e.donor).kept_at(e.donor_step);
      if (!kept)
        throw UsageError("simulate: trial " + std::to_string(e.donor) + " kept no checkpoint at " +
                         format_double(e.donor_step));
      trials_.at(decided.first).clone = *kept;
    }
  }

  // PBT: the trial takes over the donor's checkpoint and goes on with a new configuration.
  void exploit(TrialId trial, const Exploit& e, double time_s) {
    if (!trials_.at(trial).clone)
      throw UsageError("simulate: trial " + std::to_string(trial) + " resumes as an exploit of " +
                       std::to_string(e.donor) + " that cloned nothing");
    const auto [step, curve, reports] = *trials_[trial].clone;
    trials_[trial].clone.reset();
    const auto next = objective_->continue_from(curve, reports - 1, trial, e.config);
    if (!next) throw UsageError("simulate: the objective cannot continue a trial");
    SimulatedTrial& t = trials_[trial];
    t.curve = *next;
    t.reports = t.judged = t.checkpoint = reports;
    t.step = t.checkpoint_step = step;
    t.kept.clear();
    observer_->trial_exploited(trial, e, time_s);
  }

  void end_trial(TrialId trial, TrialEnd how, double value, double time_s) {
    scheduler_->end_trial(trial, how, Observation{trials_[trial].step, value});
    take_clones();  // synchronous PBT: the exploits are applied when the trials resume
    suggester_->ended(trial, how);
    (how == TrialEnd::Completed ? progress_.completed : progress_.stopped) += 1;
    observer_->trial_ended(trial, how, time_s);
    collect_dropped(time_s);
  }

  void free_worker(std::size_t worker, double time_s) {
    busy_s_ += time_s - busy_since_[worker];
    last_departure_ = time_s;
    if (clock_) clock_->attempt_ended(running_trial_[worker]);
    --progress_.running;
    idle_.push_back(worker);
  }

  void collect_dropped(double time_s) {
    for (const TrialId trial : scheduler_->take_dropped()) {
      --progress_.paused;
      ++progress_.stopped;
      observer_->trial_ended(trial, TrialEnd::Stopped, time_s);
    }
  }

  void note_best(TrialId trial, double step, double value, double time_s) {
    if (std::isnan(value)) return;
    const bool better =
        !progress_.best_value ||
        (spec_.mode == Mode::Min ? value < *progress_.best_value : value > *progress_.best_value);
    if (better) {
      progress_.best_value = value;
      best_trial_ = trial;
      best_curve_ = trials_[trial].curve;  // PBT changes a trial's configuration
      best_step_ = step;
    }
    const auto& target = spec_.simulate.target;
    const bool reached = target && (spec_.mode == Mode::Min ? value <= *target : value >= *target);
    if (reached && !time_to_target_) time_to_target_ = time_s;
    if (spec_.metric_threshold && !halted_ &&
        (spec_.mode == Mode::Min ? value <= *spec_.metric_threshold
                                 : value >= *spec_.metric_threshold))
      halted_ = true;
  }

  // Time budget or metric threshold reached: running trials are stopped where they are.
  void stop_everything(double time_s) {
    now_ = time_s;
    while (!events_.empty()) {
      const StepDone event = events_.top();
      events_.pop();
      const TrialId trial = running_trial_[event.worker];
      free_worker(event.worker, time_s);
      end_trial(trial, TrialEnd::Stopped, trials_[trial].value, time_s);
    }
    if (!closed_) close_admissions(time_s);
    collect_dropped(time_s);
  }

  SimulationProgress snapshot(double time_s) const {
    SimulationProgress p = progress_;
    p.time_s = time_s;
    return p;
  }

  SimulationSummary summary() const {
    SimulationSummary s;
    s.final = snapshot(now_);
    s.best_trial = best_trial_;
    s.best_step = best_step_;
    if (best_trial_) s.best_config = objective_->configuration(best_curve_);
    s.ended_as_recorded = ended_as_recorded_;
    s.beyond_recorded = beyond_recorded_;
    s.time_to_target_s = time_to_target_;
    s.decisions_charged = decisions_charged_;
    s.decision_s = decision_s_;
    s.makespan_s = now_;
    s.utilisation = now_ > 0 ? busy_s_ / (static_cast<double>(workers_) * now_) : 0.0;
    if (costs_) {
      s.allocation = *costs_;
      s.allocation->busy_s = busy_s_;
      s.allocation->charged_s +=
          (std::max(now_, allocation_start_) - allocation_start_) * static_cast<double>(workers_);
    }
    return s;
  }

  const StudySpec& spec_;
  SimulationObserver silent_;
  SimulationObserver* observer_;
  std::unique_ptr<Objective> objective_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<Suggester> suggester_;
  std::uint64_t events_done_ = 0;  // for state_round_trip_every
  std::uint64_t max_trials_;
  std::size_t workers_;
  std::uint64_t progress_every_ = 1;
  std::vector<double> busy_since_;
  std::vector<double> decision_wait_;  // measured decision seconds owed before the next step
  std::vector<double> segment_since_;  // when the worker's current step (or start-up) began
  std::vector<TrialId> running_trial_;
  SimulationOptions options_;
  std::optional<AllocationCosts> costs_;  // with allocations only
  std::optional<AllocationClock> clock_;
  double boundary_ = std::numeric_limits<double>::infinity();  // the allocation's end
  std::deque<TrialId> restart_;  // killed, suspended or held: first in the next allocation
  bool held_now_ = false;        // this allocation held work back
  double allocation_start_ = 0, last_departure_ = 0;
  std::vector<std::size_t> idle_;
  std::vector<SimulatedTrial> trials_;
  std::priority_queue<StepDone, std::vector<StepDone>, std::greater<>> events_;
  std::uint64_t sequence_ = 0;
  SimulationProgress progress_;
  std::optional<TrialId> best_trial_;
  CurveId best_curve_ = 0;  // the curve it followed then
  double best_step_ = 0;
  std::optional<double> time_to_target_;
  double busy_s_ = 0;
  double decision_s_ = 0;
  double ahead_ready_at_ = 0;  // when the suggestion made ahead is done (virtual seconds)
  std::uint64_t decisions_charged_ = 0;
  double now_ = 0;
  bool closed_ = false;
  bool halted_ = false;
  std::uint64_t ended_as_recorded_ = 0, beyond_recorded_ = 0;
  std::uint64_t reports_at_allocation_start_ = 0;
  int idle_allocations_ = 0;
};

}  // namespace

SimulationSummary simulate_study(const StudySpec& spec, const SimulationOptions& options,
                                 SimulationObserver* observer) {
  return Simulator(spec, options, observer).run();
}

}  // namespace slurmtune::core
