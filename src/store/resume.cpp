#include "store/resume.hpp"

#include <algorithm>
#include <cmath>

#include "config/study_file.hpp"
#include "core/number_text.hpp"
#include "core/schedulers/scheduler_spec.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/study_controller.hpp"
#include "core/study/suggester_factory.hpp"

namespace slurmtune::store {
namespace {

// Keys that only bound or describe how the study runs from now on; changing them cannot
// make the rebuilt scheduler disagree with what it decided before.
bool is_safe_key(const std::string& key) {
  for (const std::string prefix : {"trial.", "checkpoints.", "resources.", "simulate."})
    if (key.starts_with(prefix)) return true;
  return key == "study.max_trials" || key == "study.time_budget_s" ||
         key == "study.metric_threshold";
}

std::optional<core::Observation> observation(const EventRecord& e) {
  if (std::isnan(e.step)) return std::nullopt;
  return core::Observation{e.step, e.value};
}

// The study as it is being rebuilt: the scheduler and the suggester see every recorded
// event in the order the original run gave it to them.
struct Replay {
  core::Scheduler& scheduler;
  core::Suggester& suggester;
  const std::vector<TrialRecord>& trials;
  std::optional<core::TrialId> last_started;
  std::optional<core::TrialId> last_of_file;  // the last trial the file records a start of
};

std::optional<core::TrialId> last_start(const std::vector<EventRecord>& events) {
  std::optional<core::TrialId> last;
  for (const auto& e : events)
    if (e.kind == EventKind::Start && (!last || e.trial > *last)) last = e.trial;
  return last;
}

// Applies one recorded lifecycle event to the scheduler and the suggester.
void replay_event(Replay& replay, const EventRecord& e, const std::string& path) {
  core::Scheduler& scheduler = replay.scheduler;
  switch (e.kind) {
    case EventKind::Start:
      scheduler.add_trial(e.trial, std::nullopt);
      if (e.trial >= replay.trials.size())
        throw InputError(path + ": corrupted: trial " + std::to_string(e.trial) + " started (seq " +
                         std::to_string(e.seq) + ") but has no /trials row");
      scheduler.trial_configured(e.trial, replay.trials[e.trial].config);
      replay.suggester.started(e.trial, replay.trials[e.trial].config);
      replay.suggester.began_at(e.trial, 0, e.time);
      replay.last_started = e.trial;
      // suggest_ahead made the next trial's suggestion here (SuggestionsAhead).
      if (replay.last_of_file == e.trial)
        replay.suggester.replayed_last_start(e.trial, replay.trials[e.trial].suggestion.position);
      break;
    case EventKind::Resume: {
      // The original run got this resumption from next_job(); asking again moves the
      // scheduler's promotion queue exactly as it moved then.
      const auto job = scheduler.next_job(false);
      if (!job || job->kind != core::Job::Kind::Resume || job->trial != e.trial)
        throw InputError(path + ": replaying seq " + std::to_string(e.seq) + ": the scheduler " +
                         "would not resume trial " + std::to_string(e.trial) +
                         " here; the file was written by a different scheduler version");
      replay.suggester.resumed(e.trial);
      replay.suggester.began_at(e.trial, e.step, e.time);
      break;
    }
    case EventKind::Closed:
      scheduler.close_admissions();
      break;
    case EventKind::Checkpoint:
      scheduler.checkpoint_saved(e.trial, e.step);
      break;
    case EventKind::Reopen:
      // The session that wrote it reopened the trial after the same replay.
      if (!scheduler.reopen(e.trial))
        throw InputError(path + ": replaying seq " + std::to_string(e.seq) + ": the scheduler " +
                         "cannot reopen trial " + std::to_string(e.trial) +
                         " here (it did not end while paused); the file was written by a " +
                         "different scheduler version or altered");
      break;
    default:
      // Ends of trials; decisions are outcomes of reports, not inputs.
      if (const auto how = trial_end_of(e.kind)) {
        scheduler.end_trial(e.trial, *how, observation(e));
        replay.suggester.ended(e.trial, *how);
      }
      break;
  }
}

// The last replayed step of each trial, by trial id (NaN: none yet): a map looked up at
// each of a hundred million reports was a third of a resume's time.
class LastSteps {
 public:
  void set(core::TrialId trial, double step) {
    if (trial >= steps_.size()) steps_.resize(trial + 1, NAN);
    steps_[trial] = step;
  }
  std::map<core::TrialId, double> by_trial() const {
    std::map<core::TrialId, double> out;
    for (core::TrialId trial = 0; trial < steps_.size(); ++trial)
      if (!std::isnan(steps_[trial])) out.emplace_hint(out.end(), trial, steps_[trial]);
    return out;
  }

 private:
  std::vector<double> steps_;
};

// The exploits the replayed scheduler just decided; an exploited trial goes on from
// its donor's step.
void take_exploits(ResumeState& state, LastSteps& last_steps) {
  for (auto& [trial, exploit] : state.scheduler->take_exploits()) {
    last_steps.set(trial, exploit.donor_step);
    state.awaited_checkpoints.erase(trial);
    state.exploits.emplace_back(trial, std::move(exploit));
  }
}

// Trial statuses from the committed events: the trial table may have been flushed a
// moment after them by a writer that then died. Returns the trials that ended while
// paused (dropped when the study ended) and stay ended.
std::vector<core::TrialId> derive_statuses(const std::vector<EventRecord>& events,
                                           ResumeState& state) {
  std::vector<TrialStatus> status(state.trials.size(), TrialStatus::Pending);
  std::vector<bool> ended_paused(state.trials.size(), false);
  std::uint64_t started = 0;
  for (const auto& e : events) {
    if (e.kind == EventKind::Closed) {
      state.admissions_closed = true;
      continue;
    }
    if (e.kind == EventKind::Retry) ++state.retries[e.trial];
    if (e.trial >= status.size()) {
      status.resize(e.trial + 1, TrialStatus::Pending);
      ended_paused.resize(e.trial + 1, false);
    }
    switch (e.kind) {
      case EventKind::Start:
        started = std::max(started, e.trial + 1);
        [[fallthrough]];
      case EventKind::Resume:
        status[e.trial] = TrialStatus::Running;
        break;
      case EventKind::Pause:
      case EventKind::Reopen:
        status[e.trial] = TrialStatus::Paused;
        break;
      default:
        if (const auto how = trial_end_of(e.kind)) {
          ended_paused[e.trial] = status[e.trial] == TrialStatus::Paused;
          status[e.trial] = end_status(*how);
        }
        break;
    }
  }
  // Trials whose start never became durable did not happen.
  status.resize(started);
  state.trials.resize(std::min<std::size_t>(state.trials.size(), started));
  for (std::size_t id = 0; id < status.size(); ++id) {
    if (id < state.trials.size()) state.trials[id].status = status[id];
    const bool unfinished = status[id] == TrialStatus::Running || status[id] == TrialStatus::Paused;
    if (!unfinished) continue;
    state.unfinished.push_back(id);
    state.live.emplace_back(id, status[id]);
  }
  std::vector<core::TrialId> dropped;
  for (std::size_t id = 0; id < status.size(); ++id)
    if (ended_paused[id] && status[id] == TrialStatus::Stopped) dropped.push_back(id);
  return dropped;
}

// A study resumed with room for more trials (issue #58: max_trials raised with
// --allow-changes, or a time budget that starts anew) goes on where it ended: trials
// dropped only because it ended wait at their rungs again, as if it had never ended.
void reopen_dropped(ResumeState& state, const std::vector<core::TrialId>& dropped,
                    bool file_says_reopen) {
  if (!state.scheduler->reopens()) return;
  if (!file_says_reopen) {
    state.left_dropped = dropped.size();
    return;
  }
  state.scheduler->open_admissions();
  for (const core::TrialId id : dropped) {
    if (id >= state.trials.size() || !state.scheduler->reopen(id)) continue;
    state.trials[id].status = TrialStatus::Paused;
    state.unfinished.push_back(id);
    state.live.emplace_back(id, TrialStatus::Paused);
    state.reopened.push_back(id);
  }
}

}  // namespace

std::vector<StudyDifference> compare_studies(const core::StudySpec& recorded,
                                             const core::StudySpec& now) {
  const auto before = config::flatten_study(recorded);
  const auto after = config::flatten_study(now);
  std::vector<StudyDifference> out;
  for (const auto& [key, value] : before) {
    const auto it = after.find(key);
    const std::string current = it == after.end() ? "(absent)" : it->second;
    if (current != value) out.push_back({key, value, current, is_safe_key(key)});
  }
  for (const auto& [key, value] : after)
    if (!before.contains(key)) out.push_back({key, "(absent)", value, is_safe_key(key)});
  return out;
}

core::StudySpec with_recorded_sampler(core::StudySpec now, const core::StudySpec& recorded) {
  auto& sampler = now.sampler;
  if (sampler.kind == recorded.sampler.kind) {
    // tpe's default semantics was "optuna" before "auto": a study file that names none
    // resumes as its results file recorded.
    if (sampler.kind == core::SamplerKind::Tpe && !sampler.tpe_semantics_named) {
      sampler.tpe.bins = recorded.sampler.tpe.bins;
      sampler.tpe.binned_from = recorded.sampler.tpe.binned_from;
    }
    return now;
  }
  if (sampler.named) return now;
  sampler.kind = recorded.sampler.kind;
  sampler.tpe = recorded.sampler.tpe;
  sampler.bohb = recorded.sampler.bohb;
  sampler.mobster = recorded.sampler.mobster;
  sampler.nsga2 = recorded.sampler.nsga2;
  return now;
}

ResumeState resume_study(const StudyReader& reader, const core::StudySpec& now,
                         const ResumeOptions& options) {
  const auto differences = compare_studies(reader.spec(), now);
  std::string refused;
  for (const auto& d : differences) {
    if (d.safe && options.allow_safe_changes) continue;
    refused += "\n  " + d.key + ": " + d.recorded + " recorded, " + d.now + " now" +
               (d.safe ? " (safe to change: pass --allow-changes)"
                       : " (cannot change: past decisions depend on it; start a new study)");
  }
  if (!refused.empty())
    throw InputError(now.path + " does not match the study recorded in " + reader.path() + ":" +
                     refused);

  ResumeState state;
  const auto& spec = reader.spec();
  state.scheduler = core::make_scheduler(spec.scheduler, spec.mode, spec.seed, spec.name);
  state.suggester =
      core::make_suggester(now.space, now.sampler, now.mode == core::Mode::Max, now.seed);
  core::connect_model(*state.scheduler, *state.suggester);
  state.trials = reader.trials();
  const auto events = reader.events();
  Replay replay{*state.scheduler, *state.suggester, state.trials, std::nullopt, last_start(events)};
  std::uint64_t last_seq = 0;
  bool any = false;
  LastSteps last_steps;
  SessionBoundaries sessions(reader.sessions());
  reader.for_each_in_seq_order(
      events,
      [&](const EventRecord& e) {
        if (sessions.crossed(e.seq)) state.suggester->session_began();
        replay_event(replay, e, reader.path());
        if (e.kind == EventKind::Checkpoint || trial_end_of(e.kind))
          state.awaited_checkpoints.erase(e.trial);
        last_seq = e.seq;
        any = true;
        take_exploits(state, last_steps);
      },
      [&](const MetricRecord& m) {
        if (sessions.crossed(m.seq)) state.suggester->session_began();
        // The control plane refuses such steps: a file holding one was written otherwise.
        if (!(m.step >= 0 && m.step <= 9007199254740992.0))
          throw InputError(reader.path() + ": corrupted: /metrics row of seq " +
                           std::to_string(m.seq) + " (trial " + std::to_string(m.trial) +
                           ") has step " + core::format_double(m.step) +
                           ", which no report can have (0 to 2^53)");
        const double value = m.values.empty() ? NAN : m.values[0];
        state.suggester->reported_at(m.trial, m.step, m.time);
        state.suggester->reported_metrics(m.trial, m.step, m.values);
        state.scheduler->reported_metrics(m.trial, m.step, m.values);
        const core::ReportOutcome outcome = state.scheduler->report(m.trial, m.step, value);
        state.suggester->reported(m.trial, m.step, value, outcome);
        if (outcome.checkpoint) state.awaited_checkpoints[m.trial] = m.step;
        last_steps.set(m.trial, m.step);
        ++state.reports_replayed;
        last_seq = m.seq;
        any = true;
        take_exploits(state, last_steps);
      });
  state.last_step = last_steps.by_trial();
  state.suggester->session_began();  // this one: what ran in the last is not timed on
  state.recorded_exploits =
      std::min<std::size_t>(state.exploits.size(), reader.committed().exploits);
  // The last suggestion's streams: the next one continues from there.
  if (replay.last_started)
    state.suggester->restore(state.trials[*replay.last_started].suggestion.position);
  state.next_seq = std::max(any ? last_seq + 1 : 0, reader.committed().next_seq);
  const auto ended_paused = derive_statuses(events, state);
  if (state.admissions_closed && state.trials.size() < core::trial_cap(now))
    reopen_dropped(state, ended_paused, reader.layout().has_reopens());
  for (const core::TrialId id : state.scheduler->take_dropped())
    if (id < state.trials.size() && state.trials[id].status == TrialStatus::Paused)
      state.dropped.push_back(id);
  return state;
}

}  // namespace slurmtune::store
