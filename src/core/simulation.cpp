#include "core/simulation.hpp"

#include <cmath>
#include <queue>
#include <vector>

#include "core/error.hpp"
#include "core/synthetic_objective.hpp"

namespace slurmtune::core {
namespace {

struct TrialRecord {
  SyntheticObjective::Curve curve;
  double step = 0;  // steps done so far (kept while paused)
};

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
        sampler_(spec.space, spec.sampler, spec.seed),
        objective_(sampler_.space(), spec.simulate, spec.mode, spec.seed),
        scheduler_(make_scheduler(spec.scheduler, spec.mode, spec.seed, spec.name)),
        max_trials_(spec.max_trials),
        workers_(options.workers),
        busy_since_(options.workers, 0.0),
        running_trial_(options.workers, 0) {
    if (workers_ == 0) throw InputError("simulate: --workers must be at least 1");
    if (spec.sampler == SamplerKind::Grid)
      max_trials_ = std::min(max_trials_, sampler_.grid_size());
    progress_every_ = options.progress_every ? options.progress_every
                                             : std::max<std::uint64_t>(1, max_trials_ / 10);
    trials_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(max_trials_, 1u << 24)));
  }

  SimulationSummary run() {
    for (std::size_t w = 0; w < workers_; ++w)
      idle_.push_back(w);
    assign_idle(0.0);
    while (!events_.empty()) {
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
    }
    collect_dropped(now_);
    return summary();
  }

 private:
  bool may_start_new(double time_s) const {
    return !halted_ && progress_.started < max_trials_ &&
           !(spec_.time_budget_s && time_s >= *spec_.time_budget_s);
  }

  void assign_idle(double time_s) {
    while (!idle_.empty()) {
      const bool admit = may_start_new(time_s);
      if (!admit && !closed_) {
        close_admissions(time_s);
        collect_dropped(time_s);
      }
      const auto job = scheduler_->next_job(admit);
      if (!job) break;
      const std::size_t worker = idle_.back();
      idle_.pop_back();
      TrialId trial = job->trial;
      if (job->kind == Job::Kind::Start) {
        trial = progress_.started++;
        const Configuration config = sampler_.sample(trial);
        trials_.push_back(TrialRecord{objective_.curve(config), 0});
        scheduler_->add_trial(trial, std::nullopt);
        observer_->trial_started(trial, config, scheduler_->bracket_of(trial), time_s);
      } else {
        --progress_.paused;
        observer_->trial_resumed(trial, time_s);
      }
      ++progress_.running;
      running_trial_[worker] = trial;
      busy_since_[worker] = time_s;
      schedule_step(worker, time_s);
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
    const TrialRecord& t = trials_[running_trial_[worker]];
    events_.push(StepDone{time_s + t.curve.step_time_s, sequence_++, worker});
  }

  void handle_step(const StepDone& event) {
    const TrialId trial = running_trial_[event.worker];
    TrialRecord& t = trials_[trial];
    t.step += 1;
    const double value = objective_.value(t.curve, trial, t.step);
    const ReportOutcome outcome = scheduler_->report(trial, t.step, value);
    ++progress_.reports;
    observer_->reported(trial, t.step, value, outcome, event.time_s);
    note_best(trial, t.step, value, event.time_s);
    const bool finished = t.step >= scheduler_->max_resource();
    if (outcome.decision == Decision::Continue && !finished) {
      schedule_step(event.worker, event.time_s);
      return;
    }
    free_worker(event.worker, event.time_s);
    if (outcome.decision == Decision::Pause && !finished) {
      ++progress_.paused;
      collect_dropped(event.time_s);
      return;
    }
    end_trial(trial, finished ? TrialEnd::Completed : TrialEnd::Stopped, value, event.time_s);
  }

  void end_trial(TrialId trial, TrialEnd how, double value, double time_s) {
    scheduler_->end_trial(trial, how, Observation{trials_[trial].step, value});
    (how == TrialEnd::Completed ? progress_.completed : progress_.stopped) += 1;
    observer_->trial_ended(trial, how, time_s);
    collect_dropped(time_s);
  }

  void free_worker(std::size_t worker, double time_s) {
    busy_s_ += time_s - busy_since_[worker];
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
      const double value = objective_.value(trials_[trial].curve, trial, trials_[trial].step);
      end_trial(trial, TrialEnd::Stopped, value, time_s);
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
    if (best_trial_) s.best_config = sampler_.sample(*best_trial_);
    s.time_to_target_s = time_to_target_;
    s.makespan_s = now_;
    s.utilisation = now_ > 0 ? busy_s_ / (static_cast<double>(workers_) * now_) : 0.0;
    return s;
  }

  const StudySpec& spec_;
  SimulationObserver silent_;
  SimulationObserver* observer_;
  ConfigSampler sampler_;
  SyntheticObjective objective_;
  std::unique_ptr<Scheduler> scheduler_;
  std::uint64_t max_trials_;
  std::size_t workers_;
  std::uint64_t progress_every_ = 1;
  std::vector<double> busy_since_;
  std::vector<TrialId> running_trial_;
  std::vector<std::size_t> idle_;
  std::vector<TrialRecord> trials_;
  std::priority_queue<StepDone, std::vector<StepDone>, std::greater<>> events_;
  std::uint64_t sequence_ = 0;
  SimulationProgress progress_;
  std::optional<TrialId> best_trial_;
  double best_step_ = 0;
  std::optional<double> time_to_target_;
  double busy_s_ = 0;
  double now_ = 0;
  bool closed_ = false;
  bool halted_ = false;
};

}  // namespace

SimulationSummary simulate_study(const StudySpec& spec, const SimulationOptions& options,
                                 SimulationObserver* observer) {
  return Simulator(spec, options, observer).run();
}

}  // namespace slurmtune::core
