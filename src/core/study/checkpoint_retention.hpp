#pragma once
// Which checkpoints a study removes as it goes on ([checkpoints], CheckpointPolicy): the
// bookkeeping only, fed what happens to trials and answering which recorded checkpoint
// paths go. `slurmtune run` removes them off its loop and records each removal in the
// results file (runtime/coordinator/checkpoint_removal.hpp).
//
// What it never removes: the newest checkpoint of a trial that has not ended for good
// (running, paused, waiting for a retry, or dropped when the study ended: a later session
// may resume it), nor a path that holds or lies inside a checkpoint it keeps.
// Its memory grows with the live trials and keep_ended, not with the study.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/objectives/mode.hpp"
#include "core/study/study_spec.hpp"
#include "core/trial_id.hpp"

namespace slurmtune::core {

struct CheckpointRemoval {
  enum class Reason : std::uint8_t {
    Superseded,  ///< the trial saved keep_per_trial newer ones
    Ended,       ///< the trial ended for good outside the keep_ended best
    Outranked,   ///< it was among the keep_ended best until a better trial ended
  };
  TrialId trial = 0;
  double step = 0;
  std::string path;         ///< relative to the results file's folder, as /checkpoints keeps it
  std::uint64_t bytes = 0;  ///< its size when saved
  Reason reason = Reason::Superseded;
};
/// The reasons' names, in the order of the enum (the results file's enum members).
const std::vector<std::string>& checkpoint_removal_reason_names();

class CheckpointRetention {
 public:
  CheckpointRetention(CheckpointPolicy policy, Mode mode);

  /// The trial saved a checkpoint at `path` (at `step`); the same path saved again is
  /// its newest. Returns what goes now: its oldest past keep_per_trial.
  std::vector<CheckpointRemoval> saved(TrialId trial, double step, const std::string& path,
                                       std::uint64_t bytes = 0);
  /// The trial ended for good. `best`: its best value of the study's metric (nullopt: it
  /// reported none, or failed: a failed trial is never among the best). Returns what
  /// goes now: all of its checkpoints when it is not among the keep_ended best, or those
  /// of the trial it pushes out.
  std::vector<CheckpointRemoval> ended(TrialId trial, std::optional<double> best);

  /// The checkpoints it keeps of `trial`, oldest first (tests, resume).
  std::vector<std::string> kept(TrialId trial) const;

 private:
  struct Saved {
    double step = 0;
    std::string path;
    std::uint64_t bytes = 0;
  };
  using Checkpoints = std::deque<Saved>;
  // Removals of `from` except the paths that hold or lie inside one in `keep`.
  static void remove_all(TrialId trial, const Checkpoints& from, const Checkpoints& keep,
                         CheckpointRemoval::Reason reason, std::vector<CheckpointRemoval>& out);

  CheckpointPolicy policy_;
  Mode mode_;
  std::map<TrialId, Checkpoints> live_;
  /// The keep_ended best ended trials, best first: (value, smaller is better; trial).
  std::map<std::pair<double, TrialId>, Checkpoints> best_ended_;
};

}  // namespace slurmtune::core
