#pragma once
// ASHA, promotion variant (Li et al., "A System for Massively Parallel Hyperparameter
// Tuning", MLSys 2020, Algorithm 2): trials pause at every rung; a free worker resumes
// the best not-yet-promoted trial among the top 1/eta of the highest rung that has one,
// otherwise it starts a new trial.
//
// With predict = true (issue #26) each report at a rung below the top also asks the
// learning-curve extrapolator (core/prediction) where the trial will end at max_t:
//   - a trial whose optimistic end of the interval cannot beat the incumbent (the best
//     value reported at the top rung) is stopped instead of paused: it would only ever
//     be promoted to lose;
//   - a trial whose predicted value is the best predicted so far, and whose pessimistic
//     end beats the incumbent (or no trial has finished yet), runs on without pausing:
//     it does not wait at the rung for the rung to fill with a third of worse trials.
// Either way it still enters the rung's ranking. The prediction is a function of the
// trial's reports, so replay and resume decide identically.
//
// With eager_promotion = true (issue #43) a trial that reports the best value yet seen at
// a rung holding fewer than eta trials runs on instead of pausing: before a rung holds eta
// trials nothing in it can be promoted, so without it the first trial reaches max_t only
// after about eta^k trials reached the first rung. It still enters the rung's ranking.
//
// With trusted_trials = N (issue #64) the first N trials run to max_t without pausing:
// with a prior they are the earlier study's best configurations as they were, with
// [[enqueue]] the user's own, and a slow start at the first rung (a learning rate that
// pays off late) is no reason to park what the study was told is good. They still enter
// each rung's ranking, so the trials they beat there are judged against them.
//
// With trust_check = true (issue #64) a trusted trial keeps its trust only while it is
// not in the worse half of any rung it has passed: at each report that takes it to a new
// rung, each rung it reached is looked at again, and once that rung holds at least
// kTrustCheckPeers other results of which more than half rank above it, the trust ends for
// good and the rungs judge it as any trial (trust_check_above sets that share: 0.75 ends
// the trust only in a rung's worst quarter). Rungs are looked at again because a first wave
// reaches the first rung together: the trust is judged there once the rung has filled.
// Where an earlier study's lesson holds its best configurations may start slowly but not
// badly (mid-table at the first rung); where it is wrong they rank low, and a trust kept
// to max_t would hold their workers for the whole study.
//
// With a trust_check_waiver as well (issue #64) a rung k where a trusted trial ranks in the
// worse part ends its trust only if the waiver does not hold there: a late bloomer ranks
// low at first and closes the gap fast, a bad configuration ranks low and stays behind.
// The waiver looks at the rung j the trial entered next (k + 1), or at k itself while k is
// the highest it has reached, and at its peers there: the other trials that entered j from
// the rung below. "gain": the trial's change of score into j beats the median change of
// its peers'. "overtake": of its peers, at least a quarter (and at least one) that ranked
// above it in the rung below rank below it in j; unlike a gain, which is largest for
// whoever starts furthest from the plateau, this compares it only with trials measured at
// the same two rungs. The verdict waits at the first rung (nothing entered it from below)
// and while fewer than kTrustCheckPeers peers have entered j; like the ranks, the waiver
// is looked at again at each new rung the trial reaches. trust_check_waiver_from_rung = f
// leaves a low rank in the rungs below f to end the trust as without a waiver, so the first
// rung (f = 1) is judged at once instead of holding a worker until the second: where the
// lesson is wrong, a first wave of trusted trials spends that wait on bad configurations.
// "lesson" asks the earlier studies instead of the next rung, and at once: the trust of a
// trial the prior started as an earlier best is kept at a rung while its share of the
// rung's others ranked above it is at most the share of the earlier trials that beat it at
// the same resource (use_trust_lessons, from the sampler's prior) plus kTrustLessonMargin.
// A late bloomer started slowly there too; a lesson that broke ranks low here only. A
// trial without a lesson at that resource (an [[enqueue]]d one, or one the earlier studies
// stopped below it) loses its trust as without a waiver.
//
// The end game (issue #58): once admissions are closed, a worker that finds nothing the
// rule promotes resumes the best paused trial of the highest rung holding one and runs
// it to max_t without pausing again, until the first such finisher reaches max_t. A
// small study (6 trials on 4 workers, where a rung of two promotes nothing) then ends
// with its best trials trained to max_t instead of every worker idle and every trial
// dropped at a low rung. Paused trials left after that are dropped as before; a study
// resumed with room for more trials reopens them (reopen()): they wait at their rungs
// again, ranked as before.
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/prediction/curve_extrapolator.hpp"
#include "core/schedulers/early_stopping/order_statistic_tree.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/schedulers/scheduler_spec.hpp"

namespace slurmtune::core {

class AshaPromotionScheduler final : public Scheduler {
 public:
  AshaPromotionScheduler(const SchedulerSpec& spec, Mode mode);

  void add_trial(TrialId trial, std::optional<int> bracket) override;
  ReportOutcome report(TrialId trial, double step, double value) override;
  void end_trial(TrialId trial, TrialEnd how, std::optional<Observation> last) override;
  std::optional<Job> next_job(bool may_start_new) override;
  std::vector<TrialId> take_dropped() override;
  bool reopen(TrialId trial) override;
  bool reopens() const override { return true; }
  void close_admissions() override { closed_ = true; }
  void use_trust_lessons(const TrustLessons& lessons) override { lessons_ = lessons; }
  void open_admissions() override;
  double max_resource() const override { return milestones_.back(); }
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;
  double first_milestone() const { return milestones_.front(); }

  // For freeze_thaw, which decides on top of these rungs which job comes next.
  struct PausedTrial {
    TrialId trial = 0;
    double milestone = 0;       ///< the rung it paused at
    double next_milestone = 0;  ///< the rung a resumption runs it to
  };
  /// Paused trials that may still resume, by id.
  std::vector<PausedTrial> paused_trials() const;
  /// The trial next_job would promote now (by the rule, or in the end game), left paused.
  std::optional<TrialId> promotable_trial();
  /// Resumes paused `trial` for its next rung.
  Job resume(TrialId trial);
  /// Admissions closed and nothing running: a paused trial no rule resumes stays paused.
  bool settled() const { return closed_ && running_ == 0; }
  /// Ends every paused trial's wait (settled, nothing to resume); their ids, sorted.
  std::vector<TrialId> drop_paused();

 private:
  // Ranking key: higher score first, then the earlier trial (ties go to seniority).
  // NaN ranks below every number.
  using Key = std::pair<double, std::int64_t>;  // (score, -trial)
  struct Rung {
    double milestone;
    OrderStatisticTree<Key> keys;
    std::priority_queue<Key> unpromoted;  // lazily cleaned of trials that ended
    // trust_check_waiver, of the trials that entered from the rung below: "gain", their
    // (score here - score there, -trial); "overtake", their keys here and there.
    OrderStatisticTree<Key> gains, entered, entered_from;
    template <class Archive>
    void serialize(Archive& archive) {
      archive(milestone, keys, unpromoted, gains, entered, entered_from);
    }
  };
  // trust_check, while trusted: a rung it entered, its key there and (with a
  // trust_check_waiver, entered from the rung below) its key there.
  struct PassedRung {
    int rung = 0;
    Key key{};
    std::optional<Key> from;
    template <class Archive>
    void serialize(Archive& archive) {
      archive(rung, key, from);
    }
  };
  struct TrialState {
    int rung = -1;  // highest rung reached
    Key key{};      // its ranking key at that rung
    bool paused = false;
    bool alive = true;
    bool finishing = false;            // resumed in the end game: runs to max_t without pausing
    std::vector<ReportedPoint> curve;  // predict = true: its finite reports
    std::optional<double> predicted;   // its latest predicted final score
    bool distrusted = false;           // trust_check: a trusted trial that lost its trust
    std::vector<PassedRung> passed;    // trust_check, while trusted
    template <class Archive>
    void serialize(Archive& archive) {
      archive(rung, key, paused, alive, finishing, curve, predicted, distrusted, passed);
    }
  };
  static Key key_of(TrialId trial, double score);
  /// trusted_trials: whether `trial`, which just entered a rung (`entered`: the rung, its
  /// key there and, from the rung below, its key there), still runs on to max_t
  /// (trust_check may end its trust here).
  bool keeps_trust(TrialId trial, TrialState& state, PassedRung entered);
  /// trust_check: whether the trust of `trial`, which passed `passed`, ends at its i-th entry.
  bool ends_trust(TrialId trial, const std::vector<PassedRung>& passed, std::size_t i) const;
  /// trust_check_waiver = "lesson": whether the earlier studies ranked `trial` about as low
  /// at `milestone` as `share_above` (of the rung's others above it) does here.
  bool lesson_waives(TrialId trial, double milestone, double share_above) const;
  /// trust_check_waiver: how a low rank at `passed[i]` is judged by what came next.
  enum class Verdict { Stands, Waived, Waits };
  Verdict waiver_verdict(const std::vector<PassedRung>& passed, std::size_t i) const;
  /// The waiver at rung `judged` (entered from the rung below), with enough peers there.
  bool waiver_holds(const Rung& rung, const PassedRung& judged) const;
  /// predict = true: turns a rung's Pause into Stop or Continue as the prediction says.
  void apply_prediction(TrialId trial, TrialState& state, ReportOutcome& outcome);
  /// eager_promotion: `key` (just entered) is the best of a rung that promotes nothing yet.
  bool leads_short_rung(const Rung& rung, const Key& key) const;
  // Rung whose best waiting trial is in its top 1/eta (highest first), if any.
  std::optional<std::size_t> promotable_rung();
  // The end game's pick: the best waiting trial of the highest rung that has one.
  std::optional<TrialId> end_game_trial();
  // Drops entries of trials that no longer wait at rung k; its best waiting key, if any.
  std::optional<Key> best_waiting(std::size_t k);

  std::vector<double> milestones_;
  double reduction_factor_;
  std::vector<Rung> rungs_;
  std::unordered_map<TrialId, TrialState> trials_;
  std::size_t running_ = 0;  // trials alive and not paused
  bool closed_ = false;
  bool predict_ = false;
  bool eager_ = false;
  TrialId trusted_ = 0;       // trials below this id run to max_t without pausing
  bool trust_check_ = false;  // ... while not in the worse half of a passed rung
  double trust_check_above_ = kDefaultTrustCheckAbove;  // ... or the share trust_check_above gives
  TrustWaiver trust_check_waiver_ = TrustWaiver::None;  // ... unless it closes the gap
  std::int64_t waiver_from_rung_ = 0;                   // ... in a rung this high or higher
  TrustLessons lessons_;        // "lesson": what the earlier studies saw, by trial (connect_model)
  bool end_game_over_ = false;  // a finisher reached max_t
  std::optional<TrialId> end_game_pick_;  // promotable_trial's last end-game answer
  CurveExtrapolator extrapolator_;
  std::optional<double> incumbent_;                   // best score reported at the top rung
  std::set<std::pair<double, TrialId>> predictions_;  // (latest predicted score, trial)
};

}  // namespace slurmtune::core
