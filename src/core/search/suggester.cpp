#include "core/search/suggester.hpp"

#include <limits>
#include <string>

#include "core/error.hpp"

namespace slurmtune::core {

std::string_view to_string(SuggestionOrigin origin) {
  switch (origin) {
    case SuggestionOrigin::Blind:
      return "blind";
    case SuggestionOrigin::Startup:
      return "startup";
    case SuggestionOrigin::Random:
      return "random";
    case SuggestionOrigin::Model:
      return "model";
    case SuggestionOrigin::Enqueued:
      return "enqueued";
  }
  return "?";
}

namespace {

// Passes every call on to the sampler it wraps, this study's trial t as the sampler's
// trial offset + t.
class Forwarding : public Suggester, public ContinuationModel {
 public:
  Forwarding(std::unique_ptr<Suggester> sampler, TrialId offset)
      : sampler_(std::move(sampler)), offset_(offset) {}

  Suggestion suggest(TrialId trial) override { return sampler_->suggest(offset_ + trial); }
  Suggestion suggest_fixed(TrialId trial, const PartialConfiguration& fixed) override {
    return sampler_->suggest_fixed(offset_ + trial, fixed);
  }
  void started(TrialId trial, const Configuration& config) override {
    sampler_->started(offset_ + trial, config);
  }
  void reported(TrialId trial, double step, double value, const ReportOutcome& outcome) override {
    sampler_->reported(offset_ + trial, step, value, outcome);
  }
  void reported_metrics(TrialId trial, double step, const std::vector<double>& row) override {
    sampler_->reported_metrics(offset_ + trial, step, row);
  }
  void resumed(TrialId trial) override { sampler_->resumed(offset_ + trial); }
  void ended(TrialId trial, TrialEnd how) override { sampler_->ended(offset_ + trial, how); }
  void began_at(TrialId trial, double step, double time_s) override {
    sampler_->began_at(offset_ + trial, step, time_s);
  }
  void reported_at(TrialId trial, double step, double time_s) override {
    sampler_->reported_at(offset_ + trial, step, time_s);
  }
  void session_began() override { sampler_->session_began(); }
  void restore(const SamplerPosition& position) override { sampler_->restore(position); }
  void save_state(StateOut& archive) const override { sampler_->save_state(archive); }
  void load_state(StateIn& archive) override { sampler_->load_state(archive); }
  ContinuationModel* continuation_model() override {
    return sampler_->continuation_model() ? this : nullptr;
  }
  std::optional<ContinuationScores> score_jobs(
      TrialId next_trial, double first_resource,
      const std::vector<ContinuationQuery>& paused) override {
    std::vector<ContinuationQuery> shifted = paused;
    for (auto& q : shifted)
      q.trial += offset_;
    return sampler_->continuation_model()->score_jobs(offset_ + next_trial, first_resource,
                                                      shifted);
  }

 protected:
  Suggester& sampler() { return *sampler_; }

 private:
  std::unique_ptr<Suggester> sampler_;
  TrialId offset_;
};

// The enqueued configurations first, then the sampler's: every event reaches the
// sampler, so a model learns from the enqueued trials as from any other.
class EnqueuedFirst final : public Forwarding {
 public:
  EnqueuedFirst(const SearchSpace& space, std::unique_ptr<Suggester> sampler,
                std::vector<PartialConfiguration> enqueued)
      : Forwarding(std::move(sampler), 0), space_(space), enqueued_(std::move(enqueued)) {}

  Suggestion suggest(TrialId trial) override {
    if (trial >= enqueued_.size()) return Forwarding::suggest(trial);
    return suggest_fixed(trial, enqueued_[trial]);
  }
  Suggestion suggest_fixed(TrialId trial, const PartialConfiguration& fixed) override {
    Suggestion s = Forwarding::suggest_fixed(trial, fixed);
    apply_fixed(s, fixed, space_);
    // A sampler that records its suggestion as started (MOBSTER) learns the configuration
    // that runs, the fixed values in: replay tells it the same from the trial's start event.
    Forwarding::started(trial, s.config);
    return s;
  }

 private:
  SearchSpace space_;
  std::vector<PartialConfiguration> enqueued_;
};

// The sampler learns from the trials of earlier studies first: they become its trials
// 0..k-1 (as Optuna's add_trials numbers them), this study's trial t its trial k + t.
class WarmStarted final : public Forwarding {
 public:
  WarmStarted(std::unique_ptr<Suggester> inner, const std::vector<PastTrial>& past)
      : Forwarding(std::move(inner), past.size()) {
    for (TrialId t = 0; t < past.size(); ++t) {
      const PastTrial& p = past[t];
      sampler().started(t, p.config);
      for (const auto& j : p.judged) {
        ReportOutcome judged;
        judged.milestone = j.milestone;
        sampler().reported(t, j.step, j.value, judged);
      }
      // The last report counts last (a completed trial's value), judged or not.
      if (p.last && (p.judged.empty() || p.judged.back().step != p.last->first))
        sampler().reported(t, p.last->first, p.last->second, {});
      sampler().ended(t, p.end);
    }
  }
};

}  // namespace

void connect_model(Scheduler& scheduler, Suggester& suggester) {
  scheduler.use_model(suggester.continuation_model());
  scheduler.use_trust_lessons(suggester.trust_lessons());
}

Suggestion Suggester::suggest_fixed(TrialId trial, const PartialConfiguration& /*fixed*/) {
  return suggest(trial);  // EnqueuedFirst puts the fixed values in
}

void apply_fixed(Suggestion& suggestion, const PartialConfiguration& fixed,
                 const SearchSpace& space) {
  Configuration& config = suggestion.config;
  const auto given = [&fixed](std::size_t p) { return p < fixed.values.size() && fixed.values[p]; };
  for (std::size_t p = 0; p < config.values.size(); ++p)
    if (given(p)) config.values[p] = *fixed.values[p];
  space.resolve_activity(config);  // a fixed choice decides which parameters exist
  bool every_value_given = true;
  for (std::size_t p = 0; p < config.values.size(); ++p)
    if (config.is_active(p) && !given(p)) every_value_given = false;
  if (every_value_given) suggestion.info.origin = SuggestionOrigin::Enqueued;
}

std::unique_ptr<Suggester> with_study_inputs(std::unique_ptr<Suggester> sampler,
                                             const SearchSpace& space, const SamplerSpec& spec) {
  if (!spec.warm_start_files.empty() && spec.warm_start.empty() && is_model_based(spec.kind))
    throw UsageError("make_suggester: warm_start files not read (store::load_warm_start)");
  if (!spec.prior_files.empty() && spec.prior.empty())
    throw UsageError("make_suggester: prior files not read (store::load_warm_start)");
  if (!spec.warm_start.empty())
    sampler = std::make_unique<WarmStarted>(std::move(sampler), spec.warm_start);
  if (spec.enqueued.empty()) return sampler;
  return std::make_unique<EnqueuedFirst>(space, std::move(sampler), spec.enqueued);
}

}  // namespace slurmtune::core
