#include "store/resume.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "config/study_file.hpp"
#include "core/number_text.hpp"
#include "core/schedulers/scheduler_spec.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/study_controller.hpp"
#include "core/study/suggester_factory.hpp"
#include "store/decision_replay.hpp"

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

std::optional<core::TrialId> last_start(const std::vector<EventRecord>& events) {
  std::optional<core::TrialId> last;
  for (const auto& e : events)
    if (e.kind == EventKind::Start && (!last || e.trial > *last)) last = e.trial;
  return last;
}

// The newest snapshot in the file that holds only committed rows and loads; the replay
// left fresh (and `note` saying why) where none does. suggest_ahead makes a suggestion
// where the last start is replayed, so a snapshot after it cannot stand in for it:
// such studies keep none (decision_snapshots_possible) and replay whole.
std::optional<std::uint64_t> start_from_snapshot(
    const StudyReader& reader, const core::StudySpec& now, DecisionReplay& replay,
    const std::function<DecisionReplay()>& fresh_replay, ResumeState& state) {
  if (!decision_snapshots_possible(now)) return std::nullopt;
  auto snapshots = reader.decision_snapshots();
  std::vector<std::pair<SnapshotHeader, std::size_t>> usable;
  for (std::size_t k = 0; k < snapshots.size(); ++k) {
    std::string why;
    const auto header = check_snapshot(snapshots[k].second, why);
    if (!header)
      state.snapshot_note += "snapshot " + std::to_string(snapshots[k].first) + ": " + why + "; ";
    else if (header->seq > reader.committed().next_seq)
      state.snapshot_note += "snapshot " + std::to_string(snapshots[k].first) +
                             ": holds rows past the last complete flush; ";
    else
      usable.emplace_back(*header, k);
  }
  std::sort(usable.begin(), usable.end(),
            [](const auto& a, const auto& b) { return a.first.seq > b.first.seq; });
  for (const auto& [header, k] : usable) {
    try {
      replay.load(snapshots[k].second);
      state.snapshot_slot = snapshots[k].first;
      return header.seq;
    } catch (const InputError& e) {
      state.snapshot_note += e.what() + std::string("; ");
      replay = fresh_replay();  // a load that failed half-way left it changed
    }
  }
  return std::nullopt;
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

core::StudySpec with_recorded_defaults(core::StudySpec now, const core::StudySpec& recorded) {
  // A prior's earlier best are trusted since issue #64: a file written before goes on
  // judging them at the rungs unless the study file names trusted_trials.
  if (!now.scheduler.trusted_trials_named)
    now.scheduler.trusted_trials = recorded.scheduler.trusted_trials;
  // Likewise the trust's check (on with a prior since 2026-12-04).
  if (!now.scheduler.trust_check_named) now.scheduler.trust_check = recorded.scheduler.trust_check;
  // And the waiver with the rung it is weighed from (a prior's since C18, 2026-12-04).
  if (!now.scheduler.trust_check_waiver_named)
    now.scheduler.trust_check_waiver = recorded.scheduler.trust_check_waiver;
  if (!now.scheduler.trust_check_waiver_from_rung_named)
    now.scheduler.trust_check_waiver_from_rung = recorded.scheduler.trust_check_waiver_from_rung;
  auto& sampler = now.sampler;
  if (sampler.kind == recorded.sampler.kind) {
    // tpe's default semantics was "optuna" before "auto": a study file that names none
    // resumes as its results file recorded.
    if (sampler.kind == core::SamplerKind::Tpe && !sampler.tpe_semantics_named) {
      sampler.tpe.bins = recorded.sampler.tpe.bins;
      sampler.tpe.binned_from = recorded.sampler.tpe.binned_from;
    }
    // Launch waves came in later (issue #61): a file written before them resumes without.
    if (sampler.kind == core::SamplerKind::Mobster && !sampler.mobster_wave_named)
      sampler.mobster.wave = recorded.sampler.mobster.wave;
    // The prior's start-up defaults changed on 2026-12-04 (prior_exact 2 to 5, prior_startup
    // all start-ups to 10): a file written before keeps what it recorded unless named.
    if (core::has_prior(sampler) && !recorded.sampler.prior_files.empty()) {
      if (!sampler.prior_exact_named)
        sampler.mobster.prior_exact = recorded.sampler.mobster.prior_exact;
      if (!sampler.prior_startup_named)
        sampler.mobster.prior_startup = recorded.sampler.mobster.prior_startup;
      // prior_check became the default on 2026-12-04 too.
      if (!sampler.prior_check_named)
        sampler.mobster.prior_check = recorded.sampler.mobster.prior_check;
      // Resolved for the trials the first session ran at once: a session with another
      // allocation goes on with them, as the recorded suggestions were made with them.
      sampler.prior_start_resolved = true;
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
  state.trials = reader.trials();
  const auto events = reader.events();
  const auto sessions = reader.sessions();
  const auto last_of_file = last_start(events);
  const auto fresh_replay = [&] {
    DecisionReplay fresh(reader.spec(), now, reader.path());
    for (const auto& session : sessions)
      fresh.add_session(session.first_seq);
    if (last_of_file && *last_of_file < state.trials.size())
      fresh.set_last_start(*last_of_file, state.trials[*last_of_file].suggestion.position);
    return fresh;
  };
  DecisionReplay replay = fresh_replay();
  if (options.use_snapshots)
    state.snapshot_seq = start_from_snapshot(reader, now, replay, fresh_replay, state);
  const std::uint64_t reports_before = replay.reports();  // the snapshot's
  const auto config_of = [&state](const EventRecord& e) -> const core::Configuration* {
    return e.trial < state.trials.size() ? &state.trials[e.trial].config : nullptr;
  };
  reader.for_each_in_seq_order(
      events, [&](const EventRecord& e) { replay.event(e, config_of(e)); },
      [&](const MetricRecord& m) { replay.metric(m); }, state.snapshot_seq.value_or(0));
  // The state as a replay of these rows leaves it, before this session's touches below:
  // what `run`'s snapshots go on from (store/decision_snapshots.hpp).
  if (options.keep_replayed_state && decision_snapshots_possible(now))
    state.replayed_state = replay.snapshot();
  state.reports_replayed = replay.reports() - reports_before;
  state.last_step = replay.last_steps();
  state.awaited_checkpoints = replay.awaited_checkpoints();
  state.exploits = replay.exploits();
  const auto last_started = replay.last_started();
  state.scheduler = replay.take_scheduler();
  state.suggester = replay.take_suggester();
  state.suggester->session_began();  // this one: what ran in the last is not timed on
  state.recorded_exploits =
      std::min<std::size_t>(state.exploits.size(), reader.committed().exploits);
  // The last suggestion's streams: the next one continues from there.
  if (last_started && *last_started < state.trials.size())
    state.suggester->restore(state.trials[*last_started].suggestion.position);
  state.next_seq = std::max(replay.next_seq(), reader.committed().next_seq);
  const auto ended_paused = derive_statuses(events, state);
  if (state.admissions_closed && state.trials.size() < core::trial_cap(now))
    reopen_dropped(state, ended_paused, reader.layout().has_reopens());
  for (const core::TrialId id : state.scheduler->take_dropped())
    if (id < state.trials.size() && state.trials[id].status == TrialStatus::Paused)
      state.dropped.push_back(id);
  return state;
}

}  // namespace slurmtune::store
