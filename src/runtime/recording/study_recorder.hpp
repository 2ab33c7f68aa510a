#pragma once
// Writes the controller's decisions (starts, retries, ends, closing admissions,
// checkpoints the scheduler asked for) to the results file and the log. PBT's exploits are
// queued for the coordinator instead: it carries them out once the event that caused
// them (the report, checkpoint or end, written after the controller returns) is recorded.
#include <string>
#include <utility>
#include <vector>

#include "core/study/study_controller.hpp"
#include "runtime/recording/checkpoint_removal.hpp"
#include "store/study_writer.hpp"

namespace slurmtune::runtime {

using PendingExploits = std::vector<std::pair<core::TrialId, core::Exploit>>;

class StudyRecorder final : public core::StudyObserver {
 public:
  StudyRecorder(store::StudyWriter& writer, PendingExploits& exploits)
      : writer_(writer), exploits_(exploits) {}

  void trial_started(core::TrialId t, const core::Configuration& c, int bracket,
                     const core::SuggestionInfo& suggestion, double time_s) override;
  void trial_resumed(core::TrialId t, const core::ResumeReason* why, double time_s) override;
  void trial_retried(core::TrialId t, const std::string& error) override;
  void trial_ended(core::TrialId t, core::TrialEnd how, const std::string& error) override;
  void admissions_closed() override;
  void trial_exploited(core::TrialId t, const core::Exploit& exploit) override;
  void checkpoint_saved(core::TrialId t, double step) override;
  /// [checkpoints]: told of every trial that ends for good.
  void set_checkpoint_remover(CheckpointRemover* remover) { remover_ = remover; }

 private:
  store::StudyWriter& writer_;
  PendingExploits& exploits_;
  CheckpointRemover* remover_ = nullptr;
};

}  // namespace slurmtune::runtime
