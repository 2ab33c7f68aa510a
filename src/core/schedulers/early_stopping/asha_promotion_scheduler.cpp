#include "core/schedulers/early_stopping/asha_promotion_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/schedulers/rung_ladder.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {
namespace {

// trust_check: the other results a rung must hold before it can end a trial's trust. With
// fewer, half of them is one or two trials that may be lucky draws.
constexpr std::size_t kTrustCheckPeers = 3;

// trust_check_waiver = "lesson": how much more of a rung may rank above a trusted trial
// than ranked above it in the earlier study at the same resource. A rung here holds other
// trials than the earlier study's did (a first wave drawn around the earlier best), so
// the same standing reads a little lower; a lesson that broke reads half a rung lower or
// more (tests/bench/quality/priors/rung_lessons.py).
constexpr double kTrustLessonMargin = 0.25;

// trust_check_waiver = "gain": a score's change from one rung to the next; a diverged
// report on either side gains least, so it never waives a verdict.
double gain_between(double from, double to) {
  if (!std::isfinite(from) || !std::isfinite(to)) return -std::numeric_limits<double>::infinity();
  return to - from;
}

}  // namespace

AshaPromotionScheduler::AshaPromotionScheduler(const SchedulerSpec& spec, Mode mode)
    : Scheduler(mode),
      milestones_(promotion_milestones(spec)),
      reduction_factor_(spec.reduction_factor),
      predict_(spec.predict),
      eager_(spec.eager_promotion),
      trusted_(static_cast<TrialId>(spec.trusted_trials.value_or(0))),
      trust_check_(spec.trust_check),
      trust_check_above_(spec.trust_check_above),
      trust_check_waiver_(spec.trust_check_waiver),
      waiver_from_rung_(spec.trust_check_waiver_from_rung) {
  if (milestones_.empty()) throw InputError("scheduler: asha_promotion needs at least one rung");
  for (const double m : milestones_)
    rungs_.push_back(Rung{m, {}, {}, {}, {}, {}});
}

AshaPromotionScheduler::Key AshaPromotionScheduler::key_of(TrialId trial, double score) {
  const double s = std::isnan(score) ? -std::numeric_limits<double>::infinity() : score;
  return {s, -static_cast<std::int64_t>(trial)};
}

void AshaPromotionScheduler::open_admissions() {
  // The end game belongs to a study that takes no new trials; reopened, it is not over
  // but not begun either.
  closed_ = false;
  end_game_over_ = false;
}

void AshaPromotionScheduler::add_trial(TrialId trial, std::optional<int>) {
  if (closed_) open_admissions();  // a start after a close: a replay of a reopened study
  trials_.insert_or_assign(trial, TrialState{});
  ++running_;
}

ReportOutcome AshaPromotionScheduler::report(TrialId trial, double step, double value) {
  const auto it = trials_.find(trial);
  if (it == trials_.end()) throw_unknown_trial(trial);
  TrialState& state = it->second;
  if (predict_ && std::isfinite(value) && (state.curve.empty() || step > state.curve.back().step))
    state.curve.push_back({step, value});
  // The highest rung this step reaches; rungs jumped over in one report are not entered.
  std::size_t next = state.rung < 0 ? 0 : static_cast<std::size_t>(state.rung) + 1;
  while (next < rungs_.size() && step >= rungs_[next].milestone)
    ++next;
  const int reached = static_cast<int>(next) - 1;
  if (reached == state.rung) return ReportOutcome{};
  Rung& rung = rungs_[static_cast<std::size_t>(reached)];
  const Key key = key_of(trial, score(value));
  std::optional<Key> from;  // its key a rung below, where it entered from there
  if (trust_check_waiver_ != TrustWaiver::None && state.rung >= 0 && reached == state.rung + 1) {
    from = state.key;
    if (trust_check_waiver_ == TrustWaiver::Gain) {
      rung.gains.insert({gain_between(from->first, key.first), key.second});
    } else {
      rung.entered.insert(key);
      rung.entered_from.insert(*from);
    }
  }
  state.rung = reached;
  state.key = key;
  rung.keys.insert(key);
  ReportOutcome outcome{SchedulerDecision::Pause, reached, rung.milestone, {}, false, {}, {}, {}};
  if (reached + 1 == static_cast<int>(rungs_.size())) {
    outcome.decision = SchedulerDecision::Stop;  // top rung: the trial has run its full course
    if (state.finishing) end_game_over_ = true;
    if (!std::isnan(key.first) && (!incumbent_ || key.first > *incumbent_)) incumbent_ = key.first;
    return outcome;
  }
  if (state.finishing || keeps_trust(trial, state, PassedRung{reached, key, from})) {
    outcome.decision = SchedulerDecision::Continue;  // the end game, or trusted: on to max_t
    return outcome;
  }
  if (predict_) apply_prediction(trial, state, outcome);
  if (eager_ && outcome.decision == SchedulerDecision::Pause && leads_short_rung(rung, key))
    outcome.decision = SchedulerDecision::Continue;
  if (outcome.decision != SchedulerDecision::Pause) return outcome;
  rung.unpromoted.push(key);
  state.paused = true;
  --running_;
  return outcome;
}

bool AshaPromotionScheduler::keeps_trust(TrialId trial, TrialState& state, PassedRung entered) {
  if (trial >= trusted_ || state.distrusted) return false;
  if (!trust_check_) return true;
  state.passed.push_back(entered);
  for (std::size_t i = 0; i < state.passed.size(); ++i) {
    if (ends_trust(trial, state.passed, i)) {
      state.distrusted = true;
      state.passed.clear();  // no longer needed: the trust does not come back
      return false;
    }
  }
  return true;
}

bool AshaPromotionScheduler::ends_trust(TrialId trial, const std::vector<PassedRung>& passed,
                                        std::size_t i) const {
  const Rung& rung = rungs_[static_cast<std::size_t>(passed[i].rung)];
  const std::size_t others = rung.keys.size() - 1;
  const std::size_t above = rung.keys.size() - rung.keys.count_less_equal(passed[i].key);
  const bool ranks_low =
      others >= kTrustCheckPeers &&
      static_cast<double>(above) > trust_check_above_ * static_cast<double>(others);
  if (!ranks_low) return false;
  if (trust_check_waiver_ == TrustWaiver::None || passed[i].rung < waiver_from_rung_) return true;
  if (trust_check_waiver_ == TrustWaiver::Lesson)
    return !lesson_waives(trial, rung.milestone,
                          static_cast<double>(above) / static_cast<double>(others));
  return waiver_verdict(passed, i) == Verdict::Stands;
}

bool AshaPromotionScheduler::lesson_waives(TrialId trial, double milestone,
                                           double share_above) const {
  if (trial >= lessons_.size()) return false;  // not started as an earlier best
  for (const RungLesson& lesson : lessons_[trial])
    if (std::abs(lesson.milestone - milestone) <= 1e-9 * std::max(1.0, milestone))
      return share_above <= lesson.share_above + kTrustLessonMargin;
  return false;  // the earlier studies did not judge it at this resource
}

AshaPromotionScheduler::Verdict AshaPromotionScheduler::waiver_verdict(
    const std::vector<PassedRung>& passed, std::size_t i) const {
  // The rung entered next, or this one while it is the highest.
  const PassedRung* judged = &passed[i];
  if (i + 1 < passed.size()) {
    if (passed[i + 1].rung != passed[i].rung + 1) return Verdict::Stands;  // jumped over
    judged = &passed[i + 1];
  }
  if (judged->rung == 0) return Verdict::Waits;  // nothing enters the first rung from below
  if (!judged->from) return Verdict::Stands;     // entered by a jump: nothing to weigh
  const Rung& rung = rungs_[static_cast<std::size_t>(judged->rung)];
  const OrderStatisticTree<Key>& peers =
      trust_check_waiver_ == TrustWaiver::Gain ? rung.gains : rung.entered;
  if (peers.size() - 1 < kTrustCheckPeers) return Verdict::Waits;
  return waiver_holds(rung, *judged) ? Verdict::Waived : Verdict::Stands;
}

bool AshaPromotionScheduler::waiver_holds(const Rung& rung, const PassedRung& judged) const {
  if (trust_check_waiver_ == TrustWaiver::Gain) {
    const std::size_t others = rung.gains.size() - 1;
    // Peers whose gain is strictly below its own (the lowest trial tie-break sorts first).
    const double gain = gain_between(judged.from->first, judged.key.first);
    const std::size_t below =
        rung.gains.count_less({gain, std::numeric_limits<std::int64_t>::min()});
    return 2 * below > others;
  }
  const auto others = static_cast<double>(rung.entered.size() - 1);
  // Peers ranked above it in the rung below, and here (its own key is not above itself).
  const auto above_before = static_cast<double>(rung.entered_from.size() -
                                                rung.entered_from.count_less_equal(*judged.from));
  const auto above_now =
      static_cast<double>(rung.entered.size() - rung.entered.count_less_equal(judged.key));
  return above_before - above_now >= std::max(1.0, others / 4);
}

bool AshaPromotionScheduler::leads_short_rung(const Rung& rung, const Key& key) const {
  // Short: floor(size / eta) = 0, so the rung's top 1/eta is empty and promotes nothing.
  const bool is_short = static_cast<double>(rung.keys.size()) < reduction_factor_;
  // A diverged (NaN) report ranks lowest and never leads.
  return is_short && std::isfinite(key.first) &&
         rung.keys.count_less_equal(key) == rung.keys.size();
}

void AshaPromotionScheduler::apply_prediction(TrialId trial, TrialState& state,
                                              ReportOutcome& outcome) {
  const double max_t = milestones_.back();
  const auto p = extrapolator_.predict(state.curve, max_t);
  if (!p) return;  // too few reports yet: the rung decides alone
  outcome.prediction = PredictedFinal{max_t, p->mean, p->lower, p->upper};
  const double mean = score(p->mean);
  const double optimistic = std::max(score(p->lower), score(p->upper));
  const double pessimistic = std::min(score(p->lower), score(p->upper));
  // A trial leads when its prediction beats every other trial's latest one.
  if (state.predicted) predictions_.erase({*state.predicted, trial});
  const bool leads = predictions_.empty() || mean > predictions_.rbegin()->first;
  state.predicted = mean;
  predictions_.insert({mean, trial});
  if (incumbent_ && optimistic < *incumbent_) {
    outcome.decision = SchedulerDecision::Stop;
  } else if (leads && (!incumbent_ || pessimistic > *incumbent_)) {
    outcome.decision = SchedulerDecision::Continue;
  }
}

void AshaPromotionScheduler::end_trial(TrialId trial, TrialEnd, std::optional<Observation>) {
  const auto it = trials_.find(trial);
  if (it == trials_.end() || !it->second.alive) return;
  if (!it->second.paused) --running_;
  it->second.alive = false;
}

std::optional<AshaPromotionScheduler::Key> AshaPromotionScheduler::best_waiting(std::size_t k) {
  Rung& rung = rungs_[k];
  while (!rung.unpromoted.empty()) {
    const Key best = rung.unpromoted.top();
    const TrialState& state = trials_.at(static_cast<TrialId>(-best.second));
    if (state.alive && state.paused && state.rung == static_cast<int>(k)) return best;
    rung.unpromoted.pop();  // ended or already moved on
  }
  return std::nullopt;
}

std::optional<std::size_t> AshaPromotionScheduler::promotable_rung() {
  for (std::size_t k = rungs_.size() - 1; k-- > 0;) {
    const auto best = best_waiting(k);
    if (!best) continue;
    const Rung& rung = rungs_[k];
    // Position of `best` from the top = keys ranked above it.
    const std::size_t above = rung.keys.size() - rung.keys.count_less_equal(*best);
    const auto top = static_cast<std::size_t>(
        std::floor(static_cast<double>(rung.keys.size()) / reduction_factor_));
    if (above < top) return k;
    // else the best waiting trial of this rung is not in its top 1/eta
  }
  return std::nullopt;
}

std::optional<TrialId> AshaPromotionScheduler::end_game_trial() {
  if (!closed_ || end_game_over_) return std::nullopt;
  for (std::size_t k = rungs_.size() - 1; k-- > 0;)
    if (const auto best = best_waiting(k)) return static_cast<TrialId>(-best->second);
  return std::nullopt;
}

std::optional<Job> AshaPromotionScheduler::next_job(bool may_start_new) {
  if (const auto trial = promotable_trial()) return resume(*trial);
  if (!may_start_new) return std::nullopt;
  return Job{Job::Kind::Start, 0, rungs_.front().milestone, std::nullopt, std::nullopt};
}

std::optional<TrialId> AshaPromotionScheduler::promotable_trial() {
  end_game_pick_.reset();
  if (const auto k = promotable_rung())
    return static_cast<TrialId>(-rungs_[*k].unpromoted.top().second);
  end_game_pick_ = end_game_trial();
  return end_game_pick_;
}

Job AshaPromotionScheduler::resume(TrialId trial) {
  TrialState& state = trials_.at(trial);
  if (!state.alive || !state.paused)
    throw UsageError("asha_promotion: trial " + std::to_string(trial) + " is not paused");
  // Its entry in the rung's queue is dropped when met (it no longer waits there).
  Rung& rung = rungs_[static_cast<std::size_t>(state.rung)];
  if (!rung.unpromoted.empty() && rung.unpromoted.top().second == -static_cast<std::int64_t>(trial))
    rung.unpromoted.pop();
  state.paused = false;
  if (end_game_pick_ == trial) state.finishing = true;
  end_game_pick_.reset();
  ++running_;
  return Job{Job::Kind::Resume, trial, rungs_[static_cast<std::size_t>(state.rung) + 1].milestone,
             std::nullopt, std::nullopt};
}

std::vector<AshaPromotionScheduler::PausedTrial> AshaPromotionScheduler::paused_trials() const {
  std::vector<PausedTrial> out;
  for (const auto& [id, state] : trials_)
    if (state.alive && state.paused)
      out.push_back({id, rungs_[static_cast<std::size_t>(state.rung)].milestone,
                     rungs_[static_cast<std::size_t>(state.rung) + 1].milestone});
  std::sort(out.begin(), out.end(),
            [](const PausedTrial& a, const PausedTrial& b) { return a.trial < b.trial; });
  return out;
}

std::vector<TrialId> AshaPromotionScheduler::drop_paused() {
  std::vector<TrialId> dropped;
  for (auto& [id, state] : trials_) {
    if (!state.alive || !state.paused) continue;
    state.alive = false;
    dropped.push_back(id);
  }
  std::sort(dropped.begin(), dropped.end());
  return dropped;
}

bool AshaPromotionScheduler::reopen(TrialId trial) {
  const auto it = trials_.find(trial);
  // Ended while paused: alive no more, still marked as waiting at its rung.
  if (it == trials_.end() || it->second.alive || !it->second.paused) return false;
  if (closed_) open_admissions();
  it->second.alive = true;
  rungs_[static_cast<std::size_t>(it->second.rung)].unpromoted.push(it->second.key);
  return true;
}

std::vector<TrialId> AshaPromotionScheduler::take_dropped() {
  // While trials run or may still arrive, a paused trial can still rise into the top
  // 1/eta of its rung (the rung grows). Only when admissions are closed, nothing runs
  // and nothing is promotable is every trial still paused final.
  if (!settled() || promotable_trial()) return {};
  return drop_paused();
}

SLURMTUNE_STATE(AshaPromotionScheduler, rungs_, trials_, running_, closed_, end_game_over_,
                end_game_pick_, incumbent_, predictions_)

}  // namespace slurmtune::core
