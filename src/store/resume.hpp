#pragma once
// Resuming a study from its results file: check that the study file given now still
// describes the recorded study, then rebuild the scheduler by replaying every recorded
// start, report and end in their original order, into the scheduler and into the
// sampler's suggester (whose random streams are then put where the last recorded
// suggestion left them), so the rebuilt study makes exactly the decisions and
// suggestions the uninterrupted one would have made. Where the file holds a decision
// snapshot (store/decision_replay.hpp), the replay starts from it and reads only the
// rows after it.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/study/study_spec.hpp"
#include "store/study_reader.hpp"

namespace slurmtune::store {

/// One key that differs between the recorded study and the one given now.
struct StudyDifference {
  std::string key;       ///< "search.lr", "study.max_trials"
  std::string recorded;  ///< TOML text, or "(absent)"
  std::string now;
  bool safe;  ///< changing it cannot alter past decisions (max_trials, budgets, [trial], ...)
};

/// Keys of the two resolved studies that differ.
std::vector<StudyDifference> compare_studies(const core::StudySpec& recorded,
                                             const core::StudySpec& now);

struct ResumeOptions {
  bool allow_safe_changes = false;  ///< accept differences marked safe
  /// Keep the replayed state as snapshot bytes (ResumeState::replayed_state).
  bool keep_replayed_state = false;
  /// Start from the file's newest usable decision snapshot (false: replay every row).
  bool use_snapshots = true;
};

struct ResumeState {
  std::unique_ptr<core::Scheduler> scheduler;
  std::unique_ptr<core::Suggester> suggester;
  std::vector<TrialRecord> trials;        ///< every recorded trial, by id
  std::uint64_t next_seq = 0;             ///< first sequence number for new rows
  std::uint64_t reports_replayed = 0;     ///< by this resume: after the snapshot, if one
  std::vector<core::TrialId> unfinished;  ///< running or paused at the last complete flush
  /// Status of every trial as the committed events say (trial rows can run ahead of them
  /// when a writer died mid-flush); `trials[i].status` holds the same.
  std::vector<std::pair<core::TrialId, TrialStatus>> live;
  std::vector<core::TrialId> dropped;  ///< paused trials the scheduler gave up on meanwhile
  /// Trials dropped when the study ended that wait at their rungs again, the study now
  /// having room for more trials; the resumed writer records each (trial_reopened).
  std::vector<core::TrialId> reopened;
  /// Such trials left ended because the file's schema (before 8) cannot say `reopen`.
  std::size_t left_dropped = 0;
  std::map<core::TrialId, double> last_step;       ///< last replayed report per trial
  std::map<core::TrialId, std::uint64_t> retries;  ///< failed attempts per trial
  bool admissions_closed = false;                  ///< a Closed event was replayed
  /// PBT: every exploit the replayed scheduler decided, in order. The first
  /// `recorded_exploits` have /exploits rows; any after them were decided just before the
  /// writer died, and the resumed run carries them out.
  std::vector<std::pair<core::TrialId, core::Exploit>> exploits;
  std::size_t recorded_exploits = 0;
  /// Checkpoints the scheduler asked for (at this step) that the file does not record
  /// as saved: the resumed run confirms them, or says they will not come.
  std::map<core::TrialId, double> awaited_checkpoints;
  /// Where the replay began: the snapshot's seq, and its slot; nullopt: the first row.
  std::optional<std::uint64_t> snapshot_seq;
  int snapshot_slot = -1;
  /// Why snapshots the file holds were not used (empty: none was refused).
  std::string snapshot_note;
  /// With ResumeOptions::keep_replayed_state: the state the replay of the file's rows
  /// left, as snapshot bytes, before this session changed it (its first suggestion's
  /// streams, reopened trials); empty where the study keeps no snapshots.
  std::string replayed_state;
};

/// The study to resume with: `now`, except that a study file naming no sampler resumes
/// with the sampler the results file recorded when the default has changed since it was
/// written (a file of the old default goes on with its sampler, not the new default's),
/// and likewise tpe's `semantics`, MOBSTER's `wave` and asha_promotion's `trusted_trials`
/// when the study file gives none.
core::StudySpec with_recorded_defaults(core::StudySpec now, const core::StudySpec& recorded);

/// Checks `now` against the recorded study (throws InputError listing every difference
/// that is not allowed) and rebuilds the study's state.
ResumeState resume_study(const StudyReader& reader, const core::StudySpec& now,
                         const ResumeOptions& options);

}  // namespace slurmtune::store
