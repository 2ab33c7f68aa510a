#include "runtime/recording/study_session.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "core/schedulers/scheduler_spec.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/suggester_factory.hpp"
#include "runtime/log.hpp"
#include "store/decision_replay.hpp"
#include "store/resume.hpp"
#include "store/study_reader.hpp"

namespace slurmtune::runtime {
namespace {

core::StudyResumePoint resume_point(const store::ResumeState& state) {
  core::StudyResumePoint point;
  point.started = state.trials.size();
  point.failures = state.retries;
  point.last_step = state.last_step;
  point.admissions_closed = state.admissions_closed;
  for (const auto& t : state.trials)
    point.configs.push_back(t.config);
  for (const auto& [trial, exploit] : state.exploits)  // PBT changed them since
    if (trial < point.configs.size()) point.configs[trial] = exploit.config;
  for (const auto& [trial, status] : state.live) {
    if (status == store::TrialStatus::Running) point.restart.push_back(trial);
    if (status == store::TrialStatus::Paused) point.paused.push_back(trial);
  }
  for (const auto& t : state.trials) {
    if (t.status == store::TrialStatus::Completed) ++point.counts.completed;
    if (t.status == store::TrialStatus::Stopped) ++point.counts.stopped;
    if (t.status == store::TrialStatus::Failed) ++point.counts.failed;
    point.counts.retries += static_cast<std::uint64_t>(t.retries);
    point.counts.reports += t.reports;
    // A failed trial is never best, in this session or after it.
    if (t.status != store::TrialStatus::Failed && t.reports > 0)
      point.best_values.push_back({t.id, t.best_step, t.best_value});
  }
  return point;
}

// A recorded trial that will not run again: a trial dropped when the study ended may.
bool ended_for_good(const store::TrialRecord& t) {
  return t.status == store::TrialStatus::Completed || t.status == store::TrialStatus::Failed ||
         (t.status == store::TrialStatus::Stopped && t.error != core::kDroppedByScheduler);
}

// [checkpoints] on resume: the retention fed the recorded checkpoints not removed since
// they were recorded, in order, then the ends of the trials that ended for good in the
// order they ended (so that a removal says what an uninterrupted run would: `outranked`
// for a trial a better one pushed out after it ended).
void rebuild_retention(const store::StudyReader& reader,
                       const std::vector<store::TrialRecord>& trials, const core::StudySpec& spec,
                       OpenedStudy& opened) {
  core::CheckpointRetention retention(spec.checkpoints, spec.mode);
  std::map<std::pair<core::TrialId, std::string>, double> removed_at;
  for (const auto& r : reader.removed_checkpoints())
    removed_at[{r.removal.trial, r.removal.path}] = r.time;
  const auto due = [&opened](std::vector<core::CheckpointRemoval> more) {
    opened.removals_due.insert(opened.removals_due.end(), more.begin(), more.end());
  };
  for (const auto& c : reader.checkpoints()) {
    const auto removed = removed_at.find({c.trial, c.path});
    if (removed != removed_at.end() && removed->second >= c.time) continue;
    due(retention.saved(c.trial, c.step, c.path, c.size));
  }
  std::vector<const store::TrialRecord*> ended;
  for (const auto& t : trials)
    if (ended_for_good(t)) ended.push_back(&t);
  std::stable_sort(ended.begin(), ended.end(),
                   [](const auto* a, const auto* b) { return a->end_time < b->end_time; });
  for (const auto* t : ended) {
    const bool ranked = t->status != store::TrialStatus::Failed && !std::isnan(t->best_value);
    due(retention.ended(t->id, ranked ? std::optional<double>(t->best_value) : std::nullopt));
  }
  opened.retention = std::move(retention);
}

// The writer's decision snapshots go on from `replay` (the state of the rows before
// this session's); their failures are logged, never the study's.
void keep_snapshots(store::StudyWriter& writer, std::unique_ptr<store::DecisionReplay> replay,
                    int slot_in_use) {
  writer.keep_decision_snapshots(std::move(replay), slot_in_use,
                                 [](const std::string& why) { log_line("warning: " + why); });
}

}  // namespace

OpenedStudy open_study(const core::StudySpec& spec, const std::string& path, bool allow_changes,
                       const store::WriterOptions& writer_options) {
  OpenedStudy opened;
  store::WriterOptions options = writer_options;
  if (!store::decision_snapshots_possible(spec)) options.snapshot_interval_s = 0;
  const bool snapshots = options.snapshot_interval_s > 0;
  if (!std::filesystem::exists(path)) {
    opened.writer = store::StudyWriter::create(path, spec, options);
    if (snapshots)
      keep_snapshots(*opened.writer, std::make_unique<store::DecisionReplay>(spec, spec, path), -1);
    opened.scheduler = core::make_scheduler(spec.scheduler, spec.mode, spec.seed, spec.name);
    opened.suggester =
        core::make_suggester(spec.space, spec.sampler, spec.mode == core::Mode::Max, spec.seed);
    if (spec.checkpoints.removes()) opened.retention.emplace(spec.checkpoints, spec.mode);
    return opened;
  }
  store::WriterPosition position;
  std::vector<core::TrialId> dropped;
  std::unique_ptr<store::DecisionReplay> replayed;  // for the writer's snapshots
  int slot_in_use = -1;
  // The rows a killed session had only logged go into the file first: the replay below,
  // and the decisions it rebuilds, then include every report a trial heard the answer to.
  opened.log_applied = store::StudyWriter::apply_log(path).value_or("");
  {
    // The reader must be gone before the writer opens the same file (HDF5 1.10 keeps
    // one open file per path and process).
    const store::StudyReader reader(path);
    auto state = store::resume_study(reader, spec, store::ResumeOptions{allow_changes, snapshots});
    opened.resumed = resume_point(state);
    opened.reports_replayed = state.reports_replayed;
    opened.snapshot_seq = state.snapshot_seq;
    opened.snapshot_note = state.snapshot_note;
    if (!state.replayed_state.empty()) {
      replayed = std::make_unique<store::DecisionReplay>(reader.spec(), spec, path);
      replayed->load(state.replayed_state);
      slot_in_use = state.snapshot_slot;
    }
    opened.scheduler = std::move(state.scheduler);
    opened.suggester = std::move(state.suggester);
    for (const auto& c : reader.checkpoints())
      opened.checkpoints[c.trial] = {c.path, c.step};
    opened.unrecorded_exploits.assign(
        state.exploits.begin() + static_cast<std::ptrdiff_t>(state.recorded_exploits),
        state.exploits.end());
    opened.awaited_checkpoints = state.awaited_checkpoints;
    opened.clonable_checkpoints = opened.scheduler->clonable_checkpoints();
    position = store::WriterPosition{state.next_seq, state.live};
    dropped = state.dropped;
    opened.reopened = state.reopened;
    opened.left_dropped = state.left_dropped;
    if (spec.checkpoints.removes()) rebuild_retention(reader, state.trials, spec, opened);
  }
  opened.writer = store::StudyWriter::reopen(path, spec, options, position);
  // Before the rows below: the snapshots' replay sees every row this session records.
  if (replayed) keep_snapshots(*opened.writer, std::move(replayed), slot_in_use);
  for (const core::TrialId trial : opened.reopened)
    opened.writer->trial_reopened(trial, store::unix_time_s());
  // Paused trials the replayed scheduler has already given up on end now, as they
  // would have in an uninterrupted run.
  for (const core::TrialId trial : dropped) {
    opened.writer->trial_ended(trial, core::TrialEnd::Stopped, store::unix_time_s(),
                               core::kDroppedByScheduler);
    std::erase(opened.resumed->paused, trial);
    ++opened.resumed->counts.stopped;
  }
  return opened;
}

}  // namespace slurmtune::runtime
