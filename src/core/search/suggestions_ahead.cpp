#include "core/search/suggestions_ahead.hpp"

#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {

void InlineCalls::post_suggest(TrialId trial) {
  made_ = Made{trial, sampler_.suggest(trial)};
}

Suggestion InlineCalls::take(TrialId trial) {
  if (!made(trial)) throw UsageError("no suggestion was made for trial " + std::to_string(trial));
  Suggestion suggestion = std::move(made_->suggestion);
  made_.reset();
  return suggestion;
}

SuggestionsAhead::SuggestionsAhead(std::unique_ptr<Suggester> sampler)
    : sampler_(std::move(sampler)), calls_(std::make_unique<InlineCalls>(*sampler_)) {}

SuggestionsAhead::~SuggestionsAhead() = default;

void SuggestionsAhead::run_calls(std::unique_ptr<SamplerCalls> calls) {
  if (posted_ && !kept_) kept_ = calls_->take(*posted_);
  calls_ = std::move(calls);
}

void SuggestionsAhead::make_due() {
  if (!due_) return;
  posted_ = due_;
  due_.reset();
  calls_->post_suggest(*posted_);
}

void SuggestionsAhead::event() {
  starting_.reset();
  make_due();
}

bool SuggestionsAhead::ready(TrialId trial) {
  if (due_ == trial) make_due();  // nothing came since the last start: the same point
  // None made ahead (a session's first): suggest() makes it when asked, where the
  // rule puts it.
  if (posted_ != trial || kept_) return true;
  return calls_->made(trial);
}

Suggestion SuggestionsAhead::suggest(TrialId trial) {
  if (due_ == trial) make_due();
  if (posted_ && *posted_ != trial)
    throw UsageError("suggest_ahead: trial " + std::to_string(trial) + " asked for where trial " +
                     std::to_string(*posted_) + " is next (trials are suggested in id order)");
  if (!posted_) {
    posted_ = trial;
    calls_->post_suggest(trial);
  }
  Suggestion suggestion = kept_ ? std::move(*kept_) : calls_->take(trial);
  kept_.reset();
  posted_.reset();
  starting_ = trial;
  due_ = trial + 1;
  return suggestion;
}

void SuggestionsAhead::started(TrialId trial, const Configuration& config) {
  if (starting_ != trial) event();  // a replayed start, or one out of the rule's order
  calls_->post([trial, config](Suggester& s) { s.started(trial, config); });
}

void SuggestionsAhead::began_at(TrialId trial, double step, double time_s) {
  const bool its_start = starting_ == trial && step == 0;
  if (!its_start) event();
  calls_->post([=](Suggester& s) { s.began_at(trial, step, time_s); });
  if (its_start) event();  // the start's last call: the next suggestion can begin now
}

void SuggestionsAhead::reported(TrialId trial, double step, double value,
                                const ReportOutcome& outcome) {
  event();
  calls_->post([=](Suggester& s) { s.reported(trial, step, value, outcome); });
}

void SuggestionsAhead::reported_metrics(TrialId trial, double step,
                                        const std::vector<double>& row) {
  event();
  calls_->post([=](Suggester& s) { s.reported_metrics(trial, step, row); });
}

void SuggestionsAhead::reported_at(TrialId trial, double step, double time_s) {
  event();
  calls_->post([=](Suggester& s) { s.reported_at(trial, step, time_s); });
}

void SuggestionsAhead::resumed(TrialId trial) {
  event();
  calls_->post([=](Suggester& s) { s.resumed(trial); });
}

void SuggestionsAhead::ended(TrialId trial, TrialEnd how) {
  event();
  calls_->post([=](Suggester& s) { s.ended(trial, how); });
}

void SuggestionsAhead::session_began() {
  event();
  calls_->post([](Suggester& s) { s.session_began(); });
}

void SuggestionsAhead::restore(const SamplerPosition& position) {
  // After replayed_last_start the streams are where the suggestion made then left them.
  if (replayed_) return;
  calls_->post([=](Suggester& s) { s.restore(position); });
}

void SuggestionsAhead::replayed_last_start(TrialId trial, const SamplerPosition& position) {
  calls_->post([=](Suggester& s) { s.restore(position); });
  replayed_ = true;
  starting_.reset();
  due_ = trial + 1;
  make_due();
}

// A suggestion made ahead and not yet asked for is written with the rest: the sampler
// read back has seen what came after it was made, so it could not make it again.
void SuggestionsAhead::save_state(StateOut& archive) const {
  if (posted_ && !kept_) kept_ = calls_->take(*posted_);
  sampler_->save_state(archive);
  archive(due_, posted_, starting_, kept_, replayed_);
}

void SuggestionsAhead::load_state(StateIn& archive) {
  sampler_->load_state(archive);
  archive(due_, posted_, starting_, kept_, replayed_);
}

}  // namespace slurmtune::core
