#pragma once
// [checkpoints] in `slurmtune run`: core::CheckpointRetention's decisions carried out.
// A removal is recorded in the results file when it is decided, and the files go on the
// coordinator's helper thread: unlinking a checkpoint of gigabytes on a parallel file
// system must not stall the loop. That thread is first in, first out, so a PBT copy
// posted before a removal has read its files by then. A trial's newest checkpoint is
// never removed while the trial may still resume from it, so neither this session nor
// a resumed one hands an attempt a removed checkpoint.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/study/checkpoint_retention.hpp"
#include "runtime/checkpoint_files.hpp"
#include "runtime/control/background_work.hpp"
#include "runtime/study_paths.hpp"
#include "store/study_writer.hpp"

namespace slurmtune::runtime {

using NodeRemovals = std::function<void(const std::vector<core::CheckpointRemoval>&)>;

class CheckpointRemover {
 public:
  CheckpointRemover(core::CheckpointRetention retention, store::StudyWriter& writer,
                    BackgroundWork& files, std::filesystem::path study_dir, TrialFolders folders);

  /// A checkpoint the results file recorded (a trial's own, or PBT's clone for it).
  void recorded(core::TrialId trial, double step, const std::string& relative, std::uint64_t bytes);
  /// The trial ended for good (not dropped when the study ended: a later session may
  /// resume it); `best`: its best value of the study's metric (nullopt: none, or failed).
  void ended(core::TrialId trial, std::optional<double> best);
  /// Records and removes `removals` (decided by a resume under a tighter policy).
  void remove(const std::vector<core::CheckpointRemoval>& removals);
  /// [checkpoints] node_local: removals of checkpoints on nodes' own disks ("NODE:/path")
  /// go to `to_nodes` (their nodes' agents), once recorded.
  void send_node_removals(NodeRemovals to_nodes) { to_nodes_ = std::move(to_nodes); }

 private:
  core::CheckpointRetention retention_;
  store::StudyWriter& writer_;
  BackgroundWork& files_;
  std::filesystem::path study_dir_;
  TrialFolders folders_;
  NodeRemovals to_nodes_;
};

}  // namespace slurmtune::runtime
