#pragma once
// The scheduler interface every driver uses: the simulator, `slurmtune replay`, and the
// coordinator of `slurmtune run`. Time never enters a scheduler: it sees trials, steps
// (the study's resource: epochs, iterations, samples) and metric values only, so each
// decision is a deterministic function of the sequence of calls.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/objectives/mode.hpp"
#include "core/space/search_space.hpp"
#include "core/state_archive.hpp"
#include "core/trial_id.hpp"

namespace slurmtune::core {

class ContinuationModel;  // core/schedulers/continuation_model.hpp

/// Exploit (PBT): the trial stops here and waits, like a paused one, to resume from
/// another trial's checkpoint with a new configuration (Job::exploit).
enum class SchedulerDecision { Continue, Stop, Pause, Exploit };
std::string_view to_string(SchedulerDecision decision);

enum class TrialEnd { Completed, Stopped, Failed };
std::string_view to_string(TrialEnd end);
std::optional<TrialEnd> trial_end_from_string(std::string_view word);

/// A PBT exploit: the trial, at `step`, continues from `donor`'s checkpoint at
/// `donor_step` with `config` (the donor's, explored).
struct Exploit {
  double step = 0;  ///< the exploited trial's own step when it was exploited
  TrialId donor = 0;
  double donor_step = 0;
  Configuration config;
  std::string operations;   ///< what exploring did, e.g. `lr * 1.2, batch shift right`
  template <class Archive>  // a snapshot (core/state_archive.hpp)
  void serialize(Archive& archive) {
    archive(step, donor, donor_step, config, operations);
  }
};

/// Where a scheduler that predicts learning curves expects a trial to end: the value at
/// `at` (max_t), with the extrapolator's interval (user units).
struct PredictedFinal {
  double at = 0;
  double mean = 0;
  double lower = 0;
  double upper = 0;
  friend bool operator==(const PredictedFinal&, const PredictedFinal&) = default;
  template <class Archive>
  void serialize(Archive& archive) {
    archive(at, mean, lower, upper);
  }
};

/// What a scheduler answers to one report.
/// MO-ASHA's judgement at a rung: of `judged` trials recorded there (this one included),
/// the first `kept` in the rung's order continue; this one came at `position` (0: first).
struct RungStanding {
  std::size_t position = 0, judged = 0, kept = 0;
};

struct ReportOutcome {
  SchedulerDecision decision = SchedulerDecision::Continue;
  std::optional<int> rung;          ///< index of the rung judged (0 = lowest), if any
  std::optional<double> milestone;  ///< that rung's resource value
  std::optional<double> cutoff;     ///< the value the report was compared with (user units)
  /// The scheduler needs a checkpoint of this step (PBT: a trial another may clone).
  bool checkpoint = false;
  std::optional<Exploit> exploit;            ///< with SchedulerDecision::Exploit
  std::optional<PredictedFinal> prediction;  ///< asha_promotion with predict = true
  /// MO-ASHA: where the report came in its rung's multi-objective order.
  std::optional<RungStanding> standing;
};

/// Why a scheduler whose model chooses the next job (freeze_thaw) resumed a trial.
struct ResumeReason {
  /// Model: its expected improvement per unit of resource beat every other job's.
  /// Promotion: asynchronous successive halving's rule (mixed in, or the model had too
  /// little data).
  enum class Rule { Model, Promotion };
  Rule rule = Rule::Promotion;
  double until = 0;  ///< the rung it resumes for
  /// Model only: the model's value at the rung it resumes for (`at`), and the expected
  /// improvement per unit of resource of this resumption and of a new configuration.
  std::optional<PredictedFinal> expected;
  double improvement = 0;
  double start_improvement = 0;
  template <class Archive>
  void serialize(Archive& archive) {
    archive(rule, until, expected, improvement, start_improvement);
  }
};
std::string_view to_string(ResumeReason::Rule rule);

/// Work for a free worker.
struct Job {
  enum class Kind { Start, Resume };
  Kind kind = Kind::Start;
  TrialId trial = 0;               ///< the trial to resume (Kind::Resume only)
  double until = 0;                ///< the resource at which the scheduler expects to judge it next
  std::optional<Exploit> exploit;  ///< Resume only: resume as this, not from its own state
  std::optional<ResumeReason> reason;  ///< Resume by freeze_thaw: why this trial
  template <class Archive>
  void serialize(Archive& archive) {
    archive(kind, trial, until, exploit, reason);
  }
};

/// The last observation of a trial, passed when it ends.
struct Observation {
  double step = 0;
  double value = 0;
};

/// What an earlier study saw of one configuration at one rung (asha_promotion's
/// trust_check_waiver = "lesson"): at `milestone`, the share of the other earlier trials
/// judged there whose value beat its own.
struct RungLesson {
  double milestone = 0;
  double share_above = 0;
};
/// By trial id: the lessons of the trials a prior starts as the earlier best, each over the
/// rungs the earlier studies judged it at, lowest first (empty: none).
using TrustLessons = std::vector<std::vector<RungLesson>>;

class Scheduler {
 public:
  explicit Scheduler(Mode mode) : mode_(mode) {}
  virtual ~Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// A new trial exists. `bracket` forces its bracket (replay of recorded decisions);
  /// otherwise the scheduler chooses one, deterministically from the seed and the id.
  virtual void add_trial(TrialId trial, std::optional<int> bracket) = 0;
  /// The trial reached `step` with metric `value` (user units; NaN and ±inf allowed).
  virtual ReportOutcome report(TrialId trial, double step, double value) = 0;
  /// A report's value of every metric column (StudySpec::metrics, NaN where absent),
  /// before report() of the same report: what a scheduler of several objectives ranks.
  virtual void reported_metrics(TrialId /*trial*/, double /*step*/,
                                const std::vector<double>& /*row*/) {}
  /// The trial ended. `last` is its last report when known.
  virtual void end_trial(TrialId trial, TrialEnd how, std::optional<Observation> last) = 0;
  /// Next job for a free worker: resume a paused trial, or start a new one when
  /// `may_start_new`; nullopt when there is nothing to do now.
  virtual std::optional<Job> next_job(bool may_start_new);
  /// No further trials will be added (max_trials or the time budget is reached).
  virtual void close_admissions() {}
  /// Admissions are open again: a resumed study whose max_trials was raised (or whose
  /// time budget starts anew) takes new trials. A scheduler that starts a trial after
  /// close_admissions (a replay of such a study) sees the same through add_trial.
  virtual void open_admissions() {}
  /// The configuration a trial runs with (at its start, and never changed by the caller).
  virtual void trial_configured(TrialId /*trial*/, const Configuration& /*config*/) {}
  /// Paused trials the scheduler has decided never to resume; each is returned once.
  virtual std::vector<TrialId> take_dropped() { return {}; }
  /// A trial that ended while paused (dropped when the study ended) waits at its rung
  /// again: a resumed study with room for more trials (issue #58). Admissions are open
  /// again. False, and nothing changes, where the trial is unknown, did not end while
  /// paused, or the scheduler has no pauses.
  virtual bool reopen(TrialId /*trial*/) { return false; }
  /// Whether this scheduler drops paused trials only because the study ended, and so
  /// can reopen them (asha_promotion, freeze_thaw; Hyperband's drops are its rule's).
  virtual bool reopens() const { return false; }
  /// A checkpoint the scheduler asked for (ReportOutcome::checkpoint) now exists: the
  /// trial saved its state at `step`. PBT clones only checkpoints that exist; the
  /// simulator confirms at once, `slurmtune run` when the trial's CHECKPOINT arrives.
  virtual void checkpoint_saved(TrialId /*trial*/, double /*step*/) {}
  /// Exploits decided since the last call, in order, each returned once: the reporter's
  /// (also in its ReportOutcome) and, in synchronous PBT, those of waiting trials.
  virtual std::vector<std::pair<TrialId, Exploit>> take_exploits() { return {}; }
  /// The checkpoints an exploit may clone now (PBT: each live trial's last kept one, by
  /// step). A resume makes sure each has its kept copy: a crash can fall between the
  /// row that says a checkpoint was saved and the end of its copy.
  virtual std::vector<std::pair<TrialId, double>> clonable_checkpoints() const { return {}; }
  /// Bracket of a known trial (0 for single-bracket schedulers).
  virtual int bracket_of(TrialId /*trial*/) const { return 0; }
  /// Resource at which a trial has run its full course.
  virtual double max_resource() const = 0;
  /// The model a scheduler may consult to choose the next job (freeze_thaw; the sampler's,
  /// when it has one: connect_model()). Others ignore it.
  virtual void use_model(ContinuationModel* /*model*/) {}
  /// What the earlier studies saw of the trials a prior starts as their best (the sampler's,
  /// connect_model()); asha_promotion's trust check weighs them, others ignore them.
  virtual void use_trust_lessons(const TrustLessons& /*lessons*/) {}
  /// What the scheduler has decided and learnt, for a snapshot (core/state_archive.hpp):
  /// load_state on a scheduler made from the same study puts it where save_state's was.
  virtual void save_state(StateOut& archive) const = 0;
  virtual void load_state(StateIn& archive) = 0;

  Mode mode() const { return mode_; }

 protected:
  /// Internal score: larger is better whatever the study's mode.
  double score(double value) const { return mode_ == Mode::Min ? -value : value; }
  /// Back from score to the user's units.
  double unscore(double s) const { return mode_ == Mode::Min ? -s : s; }
  /// A report or event named a trial that add_trial never saw: bad input (a replay log).
  [[noreturn]] static void throw_unknown_trial(TrialId trial);

 private:
  Mode mode_;
};

}  // namespace slurmtune::core
