#include "runtime/recording/study_recorder.hpp"

#include <cmath>

#include "core/study/failure_text.hpp"
#include "core/text.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {
namespace {

// A trial's error is its own text (stderr, its BYE): its first line and the last line
// of its stderr, the cause more often than not, shown with control characters written
// out, so it cannot move the cursor or recolour the terminal it is logged to.
std::string one_line(const std::string& error) {
  return core::visible(core::failure_summary(error));
}

// The controller's stamp when the driver gave one: the time the sampler learnt from.
double recorded_time(double stamped) {
  return std::isnan(stamped) ? store::unix_time_s() : stamped;
}

}  // namespace

void StudyRecorder::trial_started(core::TrialId t, const core::Configuration& c, int bracket,
                                  const core::SuggestionInfo& suggestion, double time_s) {
  writer_.trial_started(t, c, bracket, recorded_time(time_s), suggestion);
}

void StudyRecorder::trial_resumed(core::TrialId t, const core::ResumeReason* why, double time_s) {
  writer_.trial_resumed(t, recorded_time(time_s), why);
}

void StudyRecorder::trial_retried(core::TrialId t, const std::string& error) {
  writer_.trial_retried(t, store::unix_time_s(), error);
  log_line("trial " + std::to_string(t) + " failed (" + one_line(error) + "); retrying");
}

void StudyRecorder::trial_ended(core::TrialId t, core::TrialEnd how, const std::string& error) {
  const double best = writer_.best_value(t);  // while the row is live
  writer_.trial_ended(t, how, store::unix_time_s(), error);
  log_line("trial " + std::to_string(t) + " " + std::string(core::to_string(how)) +
           (error.empty() ? "" : ": " + one_line(error)));
  if (!remover_ || error == core::kDroppedByScheduler) return;
  // A failed trial is never among the best (core::CheckpointRetention::ended).
  remover_->ended(t, how == core::TrialEnd::Failed || std::isnan(best)
                         ? std::nullopt
                         : std::optional<double>(best));
}

void StudyRecorder::admissions_closed() {
  writer_.admissions_closed(store::unix_time_s());
  log_line("no further trials will start");
}

void StudyRecorder::trial_exploited(core::TrialId t, const core::Exploit& exploit) {
  exploits_.emplace_back(t, exploit);
}

void StudyRecorder::checkpoint_saved(core::TrialId t, double step) {
  writer_.checkpoint_saved(t, step, store::unix_time_s());
}

}  // namespace slurmtune::runtime
