#pragma once
// The results file of one `slurmtune run`: created when it does not exist, resumed when
// it does (after checking that the study file still describes the recorded study), so
// the same command starts a study and continues it after a requeue or a crash.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/study/checkpoint_retention.hpp"
#include "core/study/study_controller.hpp"
#include "runtime/study_paths.hpp"
#include "store/study_writer.hpp"

namespace slurmtune::runtime {

struct OpenedStudy {
  std::unique_ptr<store::StudyWriter> writer;
  std::unique_ptr<core::Scheduler> scheduler;
  std::unique_ptr<core::Suggester> suggester;     ///< resumed: has seen every recorded event
  std::optional<core::StudyResumePoint> resumed;  ///< set when the file existed
  /// A trial's latest checkpoint: its path relative to the results file's folder, and step.
  using Checkpoint = LatestCheckpoint;
  std::map<core::TrialId, Checkpoint> checkpoints;
  /// PBT exploits the resumed scheduler decided but the file did not record (the last
  /// session died in between): the coordinator carries them out.
  std::vector<std::pair<core::TrialId, core::Exploit>> unrecorded_exploits;
  /// Checkpoints the scheduler asked for and the file does not record as saved.
  std::map<core::TrialId, double> awaited_checkpoints;
  /// Checkpoints the resumed scheduler's exploits may clone (the file records them as
  /// saved), by trial: each should have its kept copy, which a crash may have cut short.
  std::vector<std::pair<core::TrialId, double>> clonable_checkpoints;
  std::uint64_t reports_replayed = 0;
  /// Resumed from a decision snapshot: the seq it holds rows up to; and why snapshots the
  /// file holds were not used (empty: none refused).
  std::optional<std::uint64_t> snapshot_seq;
  std::string snapshot_note;
  /// What the resume took in from the write-ahead log a killed session left (empty: none).
  std::string log_applied;
  /// Trials dropped when the study ended that wait at their rungs again (the study has
  /// room for more trials now), and those left ended by a file too old to say so.
  std::vector<core::TrialId> reopened;
  std::size_t left_dropped = 0;
  /// [checkpoints] (when it removes any): what the study keeps, rebuilt from the file on
  /// resume, and what a policy tighter than the last session's removes now.
  std::optional<core::CheckpointRetention> retention;
  std::vector<core::CheckpointRemoval> removals_due;
};

OpenedStudy open_study(const core::StudySpec& spec, const std::string& path, bool allow_changes,
                       const store::WriterOptions& options);

}  // namespace slurmtune::runtime
