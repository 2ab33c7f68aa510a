// PBT in `slurmtune run` (doc/schedulers.md#pbt-in-slurmtune-run): the exploits the
// controller reports are carried out once the event that caused them is recorded (the
// exploited trial gets its own clone of the donor's kept checkpoint), and a resumed
// study finishes what a crash left half done.
#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "core/search/param_value.hpp"
#include "runtime/coordinator.hpp"
#include "runtime/log.hpp"
#include "store/study_writer.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;

void Coordinator::carry_out_exploits() {
  for (const auto& [trial, exploit] : std::exchange(pending_exploits_, {}))
    exploited(trial, exploit);
}

void Coordinator::exploited(core::TrialId trial, const core::Exploit& exploit) {
  const double now = store::unix_time_s();
  study_.writer->trial_exploited(trial, exploit, now);
  std::string how = "trial " + std::to_string(trial) + " exploits trial " +
                    std::to_string(exploit.donor) + " (its checkpoint at step " +
                    core::format_double(exploit.donor_step) + "): " + exploit.operations;
  try {
    const PbtCheckpoints::Copy copy = pbt_.clone(trial, exploit);
    study_.writer->checkpoint(trial, exploit.donor_step, now, copy.relative, copy.bytes);
    study_.checkpoints[trial] = {copy.relative, exploit.donor_step};
    if (trials_.find(trial)) cloned_checkpoint_.insert(trial);
  } catch (const Error& e) {
    // Without the clone it resumes from its own checkpoint, with the new configuration.
    how += "; " + std::string(e.what()) + ": it goes on from its own checkpoint";
  }
  log_line(how);
  study_.writer->flush();
}

// PBT work the last session left half done: exploits decided but not recorded, and
// checkpoints asked for but not confirmed. A checkpoint the trial did save (indexed at
// or after the step asked for) is kept and confirmed now; a trial that restarts is
// asked again when it re-runs that step; a paused one's will not come.
void Coordinator::settle_resumed_pbt() {
  const auto& restart = study_.resumed ? study_.resumed->restart : std::vector<core::TrialId>{};
  pending_exploits_ = study_.unrecorded_exploits;
  carry_out_exploits();
  for (const auto& [trial, step] : study_.awaited_checkpoints) {
    const auto saved = study_.checkpoints.find(trial);
    if (saved != study_.checkpoints.end() && saved->second.step >= step) {
      try {
        pbt_.keep(trial, saved->second.step, fs::path(study_dir_) / saved->second.path);
        controller_->checkpoint_saved(trial, saved->second.step);
        continue;
      } catch (const Error& e) {
        log_line("trial " + std::to_string(trial) + ": " + e.what());
      }
    }
    if (std::find(restart.begin(), restart.end(), trial) != restart.end())
      controller_->expect_checkpoint(trial, step);
    else
      controller_->checkpoint_saved(trial, NAN);
  }
  carry_out_exploits();
}

}  // namespace slurmtune::runtime
