#pragma once
// `[sampler] suggest_ahead` (issue #62): a model-based sampler makes the next trial's
// configuration right after a trial starts, ahead of the free slot that will ask for it,
// so that `slurmtune run` can make it on a thread of its own (runtime::SamplerThread)
// while its loop answers reports: a MOBSTER suggestion takes ~9 ms with thousands of
// trials running, and a loop that makes it holds every trial's decision that long.
//
// The rule fixes where each suggestion is made among the sampler's events, however long
// it takes and wherever it runs: the suggestion of trial k + 1 sees exactly what the
// sampler had seen once trial k had started (suggest, started, began_at), and nothing
// after; a session's first suggestion is made when it is asked for. `run`, `simulate`,
// `replay` and a resume (Suggester::replayed_last_start) all follow it, so they make the
// same suggestions. What it gives up: the suggestion of a trial does not learn from what
// happened between the previous trial's start and its own.
#include <functional>
#include <memory>
#include <optional>

#include "core/search/suggester.hpp"

namespace slurmtune::core {

/// Runs a sampler's calls in the order they are posted: here and at once (InlineCalls),
/// or on a thread of its own (runtime::SamplerThread).
class SamplerCalls {
 public:
  using Call = std::function<void(Suggester&)>;
  virtual ~SamplerCalls() = default;
  virtual void post(Call call) = 0;
  /// Posts the suggestion of `trial`: it sees every call posted before it.
  virtual void post_suggest(TrialId trial) = 0;
  /// Whether the suggestion posted for `trial` has been made (never waits).
  virtual bool made(TrialId trial) = 0;
  /// The suggestion posted for `trial`, waiting for it to be made.
  virtual Suggestion take(TrialId trial) = 0;
};

/// The calls of `simulate`, `replay` and a resume's replay: each made as it is posted.
class InlineCalls final : public SamplerCalls {
 public:
  explicit InlineCalls(Suggester& sampler) : sampler_(sampler) {}
  void post(Call call) override { call(sampler_); }
  void post_suggest(TrialId trial) override;
  bool made(TrialId trial) override { return made_ && made_->trial == trial; }
  Suggestion take(TrialId trial) override;

 private:
  struct Made {
    TrialId trial;
    Suggestion suggestion;
  };
  Suggester& sampler_;
  std::optional<Made> made_;
};

class SuggestionsAhead final : public Suggester {
 public:
  explicit SuggestionsAhead(std::unique_ptr<Suggester> sampler);
  ~SuggestionsAhead() override;
  SuggestionsAhead(const SuggestionsAhead&) = delete;
  SuggestionsAhead& operator=(const SuggestionsAhead&) = delete;

  /// The sampler itself, for calls of another kind to run.
  Suggester& sampler() { return *sampler_; }
  /// Where the sampler's calls run from now on (a suggestion already made is kept).
  void run_calls(std::unique_ptr<SamplerCalls> calls);

  bool ready(TrialId trial) override;
  Suggestion suggest(TrialId trial) override;
  void started(TrialId trial, const Configuration& config) override;
  void began_at(TrialId trial, double step, double time_s) override;
  void reported(TrialId trial, double step, double value, const ReportOutcome& outcome) override;
  void reported_metrics(TrialId trial, double step, const std::vector<double>& row) override;
  void reported_at(TrialId trial, double step, double time_s) override;
  void resumed(TrialId trial) override;
  void ended(TrialId trial, TrialEnd how) override;
  void session_began() override;
  void restore(const SamplerPosition& position) override;
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;
  void replayed_last_start(TrialId trial, const SamplerPosition& position) override;
  /// Only where the calls are made inline: a model read from another thread while the
  /// sampler's thread changes it would race (the study file refuses freeze_thaw with it).
  ContinuationModel* continuation_model() override { return sampler_->continuation_model(); }
  /// Read from what the sampler was built with, which its thread never changes.
  TrustLessons trust_lessons() const override { return sampler_->trust_lessons(); }

 private:
  /// An event that is not part of the last trial's start: the suggestion due goes first.
  void event();
  void make_due();

  std::unique_ptr<Suggester> sampler_;
  std::unique_ptr<SamplerCalls> calls_;  // after sampler_: its thread ends first
  std::optional<TrialId> due_;           // the trial whose suggestion the next event makes first
  std::optional<TrialId> posted_;        // the trial whose suggestion is posted, not yet taken
  std::optional<TrialId> starting_;      // the trial whose start calls are still coming
  // posted_'s, made by calls that were replaced (or taken from them by save_state)
  mutable std::optional<Suggestion> kept_;
  bool replayed_ = false;  // replayed_last_start came: restore() is done
};

}  // namespace slurmtune::core
