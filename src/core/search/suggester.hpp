#pragma once
// Where the configuration of every new trial comes from. A Suggester sees the study as it
// runs (starts, reports, ends) so that model-based samplers (tpe, bohb) can learn from
// it; blind samplers (random, halton, grid) ignore what they see. `slurmtune run`,
// `simulate` and `replay` feed one the same events, in the same order, so the same
// seed and the same results give the same suggestions everywhere.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/schedulers/continuation_model.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/search/sampler_spec.hpp"
#include "core/space/search_space.hpp"

namespace slurmtune::core {

/// How a configuration was chosen (recorded per trial in the results file).
enum class SuggestionOrigin : std::uint8_t {
  Blind,     ///< a blind sampler (random, halton, grid)
  Startup,   ///< tpe: one of the first n_startup_trials, drawn at random
  Random,    ///< bohb: its random fraction, or no model fits yet
  Model,     ///< from the fitted density model
  Enqueued,  ///< every sampled value given by `[[enqueue]]`
};
std::string_view to_string(SuggestionOrigin origin);

/// The random streams of a model-based sampler after a suggestion, as 32-bit words drawn
/// since seeding: with the seed, enough to put a rebuilt sampler exactly where the
/// original was (the history is rebuilt from the recorded events).
struct SamplerPosition {
  std::uint64_t model_words = 0;
  std::uint64_t startup_words = 0;
  friend bool operator==(const SamplerPosition&, const SamplerPosition&) = default;
};

/// What the results file records about a suggestion besides the configuration.
struct SuggestionInfo {
  SuggestionOrigin origin = SuggestionOrigin::Blind;
  SamplerPosition position;
};

struct Suggestion {
  Configuration config;
  SuggestionInfo info;
  template <class Archive>  // a snapshot (core/state_archive.hpp)
  void serialize(Archive& archive) {
    archive(config, info.origin, info.position.model_words, info.position.startup_words);
  }
};

class Suggester {
 public:
  virtual ~Suggester() = default;
  /// The configuration of new trial `trial`; trials are suggested in id order.
  virtual Suggestion suggest(TrialId trial) = 0;
  /// suggest() for a trial whose values `fixed` gives some of (an enqueued
  /// configuration; make_suggester's wrapper puts them in). By default the sampler's
  /// suggestion; tpe does not draw the fixed ones at all, as Optuna's trial does not ask
  /// its sampler for a fixed parameter.
  virtual Suggestion suggest_fixed(TrialId trial, const PartialConfiguration& fixed);
  /// The trial runs `config`: the suggestion, or (recorded curves) the table's
  /// configuration nearest to it. Called after suggest(), and for every trial a resumed
  /// study replays.
  virtual void started(TrialId /*trial*/, const Configuration& /*config*/) {}
  /// A judged report: `outcome` is the scheduler's answer (a pause takes the trial out
  /// of the running ones until resumed()).
  virtual void reported(TrialId /*trial*/, double /*step*/, double /*value*/,
                        const ReportOutcome& /*outcome*/) {}
  /// A report's value of every metric column (StudySpec::metrics order; NaN where it has
  /// none), before reported() of the same report: what samplers for several objectives
  /// and constraints learn from. Every metric counts, judged or not.
  virtual void reported_metrics(TrialId /*trial*/, double /*step*/,
                                const std::vector<double>& /*row*/) {}
  virtual void resumed(TrialId /*trial*/) {}
  virtual void ended(TrialId /*trial*/, TrialEnd /*how*/) {}
  // The times the results file records (seconds on its clock: Unix time in `run`,
  // virtual time in `simulate`), from which a sampler may learn what a step costs. Every
  // driver passes the recorded numbers, so replay and resume see what the run saw.
  /// The trial began running from `step` (0 at its start, its last step when resumed).
  virtual void began_at(TrialId /*trial*/, double /*step*/, double /*time_s*/) {}
  /// A judged report's time (called before reported_metrics() of the same report).
  virtual void reported_at(TrialId /*trial*/, double /*step*/, double /*time_s*/) {}
  /// A new session of the study began: trials that ran in the last one restart without a
  /// recorded beginning, so what they ran there is not timed.
  virtual void session_began() {}
  /// Puts the random streams where a recorded suggestion left them (resume).
  virtual void restore(const SamplerPosition& /*position*/) {}
  /// Resume: the replay has just given the start of `trial`, the last one an earlier
  /// session started, whose suggestion left the streams at `position` (restore() puts
  /// them there once the replay is over). A suggester that suggests ahead
  /// (SuggestionsAhead) makes the next suggestion here, where the original run made it.
  virtual void replayed_last_start(TrialId /*trial*/, const SamplerPosition& /*position*/) {}
  /// Whether suggest(trial) can answer now without waiting for a suggestion being made
  /// elsewhere (SuggestionsAhead on a thread of its own); the caller that gets false
  /// starts no new trial now and asks again later.
  virtual bool ready(TrialId /*trial*/) { return true; }
  /// The model a scheduler may ask which job comes next (mobster's GP), if any.
  virtual ContinuationModel* continuation_model() { return nullptr; }
  /// By trial id, what the earlier studies saw of the trials this sampler starts as their
  /// best configurations (mobster's prior_exact), for the scheduler's trust check.
  virtual TrustLessons trust_lessons() const { return {}; }
  /// What the sampler has learnt and where its random streams are, for a snapshot
  /// (core/state_archive.hpp): load_state on a sampler made from the same study puts it
  /// where save_state's was.
  virtual void save_state(StateOut& archive) const = 0;
  virtual void load_state(StateIn& archive) = 0;
};

/// Lends `suggester`'s model to `scheduler` (freeze_thaw decides with it) and gives it the
/// sampler's trust lessons: every place that builds the pair (run, resume, simulate,
/// replay) calls this.
void connect_model(Scheduler& scheduler, Suggester& suggester);

/// Puts `fixed`'s values into `suggestion` and settles which parameters are active; its
/// origin becomes Enqueued when every active value was given (the study file's reader
/// fills in the constants).
void apply_fixed(Suggestion& suggestion, const PartialConfiguration& fixed,
                 const SearchSpace& space);

/// `sampler` with what the study file adds: the earlier studies' trials first
/// (`warm_start`, read by store::load_warm_start), and trial i < spec.enqueued.size()
/// suggested with entry i fixed.
std::unique_ptr<Suggester> with_study_inputs(std::unique_ptr<Suggester> sampler,
                                             const SearchSpace& space, const SamplerSpec& spec);

/// Random, halton and grid: a pure function of the trial index.
class BlindSuggester final : public Suggester {
 public:
  BlindSuggester(const SearchSpace& space, SamplerKind kind, std::uint64_t seed)
      : sampler_(space, kind, seed) {}
  Suggestion suggest(TrialId trial) override { return {sampler_.sample(trial), {}}; }
  // Each suggestion is a function of the trial's index alone: nothing to keep.
  void save_state(StateOut& /*archive*/) const override {}
  void load_state(StateIn& /*archive*/) override {}

 private:
  ConfigSampler sampler_;
};

}  // namespace slurmtune::core
