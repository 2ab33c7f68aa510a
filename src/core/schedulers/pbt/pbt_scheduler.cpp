#include "core/schedulers/pbt/pbt_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {
namespace {

constexpr std::uint64_t kPbtStream = 0x706274ULL;  // "pbt"

// Ray sorts by score with Python's sort, where NaN compares false both ways; here a NaN
// score ranks below every number (the worst), so a diverged trial is exploited.
double ranked_score(double score) {
  return std::isnan(score) ? -std::numeric_limits<double>::infinity() : score;
}

bool is_integer_value(const ParamValue& v) {
  return std::holds_alternative<std::int64_t>(v);
}

}  // namespace

PbtScheduler::PbtScheduler(const SchedulerSpec& spec, Mode mode, std::uint64_t seed)
    : Scheduler(mode),
      spec_(spec.pbt),
      max_t_(spec.max_t),
      rng_(derive_seed(seed, kPbtStream, 0)),
      next_sync_(std::max(spec.pbt.perturbation_interval, spec.pbt.burn_in_period)) {
  if (!(spec_.perturbation_interval > 0))
    throw UsageError("pbt: perturbation_interval must be positive");
  if (spec_.mutations.empty()) throw UsageError("pbt: at least one mutation is needed");
}

PbtScheduler::TrialState& PbtScheduler::state(TrialId trial) {
  if (trial >= trials_.size() || !trials_[trial].known) throw_unknown_trial(trial);
  return trials_[trial];
}

void PbtScheduler::add_trial(TrialId trial, std::optional<int> /*bracket*/) {
  if (trial >= trials_.size()) trials_.resize(trial + 1);
  if (trials_[trial].known) throw InputError("trial " + std::to_string(trial) + " started twice");
  trials_[trial].known = true;
  ++started_;
  live_.emplace(0.0, trial);
}

void PbtScheduler::trial_configured(TrialId trial, const Configuration& config) {
  state(trial).config = config;
}

void PbtScheduler::set_score(TrialId trial, double score) {
  TrialState& s = trials_[trial];
  if (s.last_score) ranking_.erase(Key{ranked_score(*s.last_score), trial});
  s.last_score = score;
  ranking_.insert(Key{ranked_score(score), trial});
}

PbtScheduler::Quantiles PbtScheduler::quantiles() const {
  // Ray's _quantiles: ceil(n q) trials per quantile, at most half the population.
  Quantiles q;
  q.n = ranking_.size();
  if (q.n <= 1) return q;
  q.k = static_cast<std::size_t>(std::ceil(static_cast<double>(q.n) * spec_.quantile_fraction));
  if (static_cast<double>(q.k) > static_cast<double>(q.n) / 2) q.k = q.n / 2;
  return q;
}

std::size_t PbtScheduler::rank_of(TrialId trial) const {
  return ranking_.order_of_key(Key{ranked_score(*trials_[trial].last_score), trial});
}

bool PbtScheduler::in_lower(TrialId trial, const Quantiles& q) const {
  return q.k > 0 && trials_[trial].last_score && !trials_[trial].finished && rank_of(trial) < q.k;
}

bool PbtScheduler::in_upper(TrialId trial, const Quantiles& q) const {
  return q.k > 0 && trials_[trial].last_score && !trials_[trial].finished &&
         rank_of(trial) >= q.n - q.k;
}

Configuration PbtScheduler::explore(const Configuration& config, std::string& operations) {
  Configuration out = config;
  operations.clear();
  for (const auto& m : spec_.mutations) {
    const ParamValue& old = config.values.at(m.param);
    ParamValue& value = out.values[m.param];
    std::string op;
    const bool listed = !m.values.empty() || m.domain.kind == DomainKind::Choice;
    if (listed) {
      // A list (or a choice's values): resampled, or shifted to a neighbour.
      const auto& list = m.values.empty() ? m.domain.values : m.values;
      const auto at = std::find(list.begin(), list.end(), old);
      if (rng_.uniform01() < spec_.resample_probability || at == list.end()) {
        value = list[rng_.below(list.size())];
        op = "resample";
      } else {
        const bool right = rng_.below(2) == 1;  // random.choice([-1, 1])
        const auto index = static_cast<std::size_t>(at - list.begin());
        const auto next =
            right ? std::min(index + 1, list.size() - 1) : (index == 0 ? 0 : index - 1);
        value = list[next];
        op = std::string(right ? "shift right" : "shift left") + (next == index ? " (noop)" : "");
      }
    } else if (rng_.uniform01() < spec_.resample_probability) {
      value = m.domain.from_unit(rng_.uniform01());
      op = "resample";
    } else {
      const double factor =
          spec_.perturbation_factors[rng_.below(spec_.perturbation_factors.size())];
      double x = as_number(old) * factor;
      if (is_integer_value(old)) x = std::trunc(x);  // Ray: int(value * factor)
      value = m.domain.from_number(x);               // and inside the domain
      op = "* " + format_double(factor);
    }
    if (!operations.empty()) operations += ", ";
    operations += m.name;
    operations += ' ';
    operations += op;
  }
  return out;
}

std::optional<Exploit> PbtScheduler::checkpoint_or_exploit(TrialId trial, const Quantiles& q) {
  TrialState& s = trials_[trial];
  // An upper-quantile trial is checkpointed here. Until that checkpoint exists
  // (checkpoint_saved; a paused trial's may already) others clone its previous one.
  if (in_upper(trial, q)) {
    if (s.saved && *s.saved >= s.last_train_time) {
      s.last_checkpoint = *s.saved;
      s.wanted.reset();
    } else {
      s.wanted = s.last_train_time;
    }
  } else {
    s.last_checkpoint.reset();
    s.wanted.reset();
  }
  if (!in_lower(trial, q)) return std::nullopt;
  const TrialId donor = ranking_.find_by_order(q.n - q.k + rng_.below(q.k))->second;
  const TrialState& d = trials_[donor];
  if (!d.last_checkpoint) return std::nullopt;  // Ray: "no checkpoint for trial, skip exploit"
  if (d.config.values.empty())
    throw InputError("pbt: trial " + std::to_string(donor) +
                     " has no configuration to explore (a replayed start needs its \"config\")");
  Exploit e;
  e.step = s.last_train_time;
  e.donor = donor;
  e.donor_step = *d.last_checkpoint;
  e.config = explore(d.config, e.operations);
  s.config = e.config;
  s.last_perturbation_time = d.last_perturbation_time;
  live_.erase({s.last_train_time, trial});
  s.last_train_time = d.last_train_time;
  live_.emplace(s.last_train_time, trial);
  s.saved.reset();  // its state is the donor's now
  s.pending = e;
  decided_.emplace_back(trial, e);
  return e;
}

void PbtScheduler::checkpoint_saved(TrialId trial, double step) {
  TrialState& s = state(trial);
  if (s.finished) return;
  if (std::isnan(step)) {
    s.wanted.reset();  // it will not come (the trial left without it)
  } else {
    s.saved = s.saved ? std::max(*s.saved, step) : step;
    if (s.wanted && step >= *s.wanted) {
      s.last_checkpoint = step;
      s.wanted.reset();
    }
  }
  if (!s.saving) return;
  s.saving = false;
  --saving_;
  sync_if_all_waiting();
}

std::vector<std::pair<TrialId, Exploit>> PbtScheduler::take_exploits() {
  return std::exchange(decided_, {});
}

std::vector<std::pair<TrialId, double>> PbtScheduler::clonable_checkpoints() const {
  std::vector<std::pair<TrialId, double>> clonable;
  for (TrialId trial = 0; trial < trials_.size(); ++trial) {
    const TrialState& s = trials_[trial];
    if (s.known && !s.finished && s.last_checkpoint)
      clonable.emplace_back(trial, *s.last_checkpoint);
  }
  return clonable;
}

void PbtScheduler::pause(TrialId trial) {
  TrialState& s = trials_[trial];
  s.paused = true;
  waiting_.emplace(s.last_train_time, trial);
}

ReportOutcome PbtScheduler::report(TrialId trial, double step, double value) {
  TrialState& s = state(trial);
  ReportOutcome outcome;
  // A step that is not a number marks no point in training (and must not key a set).
  if (s.finished || std::isnan(step)) return outcome;
  // At max_t the trial completes; Ray does not consult the scheduler on that result.
  if (step >= max_t_) return outcome;
  if (step < spec_.burn_in_period) return outcome;
  if (step - s.last_perturbation_time < spec_.perturbation_interval) return outcome;
  set_score(trial, score(value));
  live_.erase({s.last_train_time, trial});
  s.last_train_time = step;
  live_.emplace(step, trial);
  if (!spec_.synch) {
    s.last_perturbation_time = step;
    // Others waiting (not started yet, or paused): this one makes room for them.
    const bool others_wait = pending() || !waiting_.empty();
    const Quantiles q = quantiles();
    outcome.checkpoint = in_upper(trial, q);
    if (auto exploit = checkpoint_or_exploit(trial, q)) {
      outcome.decision = SchedulerDecision::Exploit;
      outcome.exploit = std::move(exploit);
      pause(trial);
      return outcome;
    }
    outcome.decision = others_wait ? SchedulerDecision::Pause : SchedulerDecision::Continue;
    if (outcome.decision == SchedulerDecision::Pause) pause(trial);
    return outcome;
  }
  // Synchronous: wait at the perturbation point until the whole population is there,
  // each with its checkpoint saved (or known missing); the last of these perturbs all,
  // and the exploits reach the trials when they resume (Job::exploit, take_exploits).
  pause(trial);
  outcome.decision = SchedulerDecision::Pause;
  outcome.checkpoint = true;
  s.saving = true;
  ++saving_;
  return outcome;
}

void PbtScheduler::perturb_all(double time) {
  const Quantiles q = quantiles();
  // Upper quantile first (checkpointed before anyone clones them), then the rest in
  // trial order, then the lower quantile: Ray's order.
  std::vector<TrialId> order;
  for (std::size_t r = q.n - q.k; r < q.n; ++r)
    order.push_back(ranking_.find_by_order(r)->second);
  for (TrialId t = 0; t < trials_.size(); ++t)
    if (trials_[t].known && !in_upper(t, q) && !in_lower(t, q)) order.push_back(t);
  for (std::size_t r = 0; r < q.k; ++r)
    order.push_back(ranking_.find_by_order(r)->second);
  double latest = 0;
  for (const TrialId t : order) {
    TrialState& s = trials_[t];
    s.last_perturbation_time = time;
    const bool was_paused = s.paused;
    if (was_paused) waiting_.erase({s.last_train_time, t});
    checkpoint_or_exploit(t, q);
    if (was_paused) waiting_.emplace(s.last_train_time, t);
  }
  for (const auto& s : trials_)
    if (s.known) latest = std::max(latest, s.last_train_time);
  next_sync_ = std::max(next_sync_ + spec_.perturbation_interval, latest);
}

void PbtScheduler::end_trial(TrialId trial, TrialEnd /*how*/, std::optional<Observation> /*last*/) {
  TrialState& s = state(trial);
  if (s.finished) return;
  s.finished = true;
  if (s.last_score) ranking_.erase(Key{ranked_score(*s.last_score), trial});
  if (s.paused) waiting_.erase({s.last_train_time, trial});
  live_.erase({s.last_train_time, trial});
  s.paused = false;
  s.pending.reset();
  if (s.saving) --saving_;
  s.saving = false;
  if (spec_.synch) sync_if_all_waiting();
}

void PbtScheduler::sync_if_all_waiting() {
  // Every live trial waits at the sync point (the one everyone waited for has ended):
  // perturb now, as the last arrival would have, rather than wait forever.
  if (pending() || saving_ > 0 || live_.empty() || waiting_.size() != live_.size()) return;
  if (live_.begin()->first < next_sync_) return;
  perturb_all(live_.rbegin()->first);
}

std::optional<Job> PbtScheduler::next_job(bool may_start_new) {
  // Ray's choose_trial_to_run: the waiting trial that has trained least (a new trial has
  // trained for 0); synchronous mode only resumes trials short of the sync point.
  if (may_start_new) return Job{Job::Kind::Start, 0, max_t_, std::nullopt, std::nullopt};
  if (waiting_.empty()) return std::nullopt;
  const auto [time, trial] = *waiting_.begin();
  if (spec_.synch && time >= next_sync_) return std::nullopt;
  waiting_.erase(waiting_.begin());
  TrialState& s = trials_[trial];
  s.paused = false;
  Job job{Job::Kind::Resume, trial, max_t_, std::move(s.pending), std::nullopt};
  s.pending.reset();
  return job;
}

// The ranking is written as its keys in order and read back by inserting them.
void PbtScheduler::save_state(StateOut& archive) const {
  const std::vector<Key> ranked(ranking_.begin(), ranking_.end());
  archive(rng_, trials_, ranked, waiting_, live_, next_sync_, decided_, started_, saving_, closed_);
}

void PbtScheduler::load_state(StateIn& archive) {
  std::vector<Key> ranked;
  archive(rng_, trials_, ranked, waiting_, live_, next_sync_, decided_, started_, saving_, closed_);
  ranking_.clear();
  for (const Key& key : ranked)
    ranking_.insert(key);
}

}  // namespace slurmtune::core
