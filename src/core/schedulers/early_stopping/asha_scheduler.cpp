#include "core/schedulers/early_stopping/asha_scheduler.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/schedulers/rung_ladder.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {
namespace {
constexpr std::uint64_t kBracketStream = 0x627261636b6574ULL;  // "bracket"
}  // namespace

double linear_percentile(const OrderStatisticTree<double>& tree, double fraction) {
  const double virtual_index = static_cast<double>(tree.size() - 1) * fraction;
  const double previous = std::floor(virtual_index);
  const auto below = static_cast<std::size_t>(previous);
  const std::size_t above = std::min(below + 1, tree.size() - 1);
  const double gamma = virtual_index - previous;
  const double a = tree.kth(below);
  const double b = tree.kth(above);
  // numpy's _lerp: a + (b-a)*t, recomputed from b when t >= 0.5 for symmetry.
  const double diff = b - a;
  return gamma >= 0.5 ? b - diff * (1.0 - gamma) : a + diff * gamma;
}

AshaScheduler::AshaScheduler(const SchedulerSpec& spec, Mode mode, std::uint64_t seed)
    : Scheduler(mode),
      max_t_(spec.max_t),
      reduction_factor_(spec.reduction_factor),
      stop_last_trials_(spec.stop_last_trials),
      seed_(seed) {
  if (!spec.milestones.empty() && spec.brackets != 1)
    throw InputError("scheduler: explicit milestones define one bracket; set brackets = 1");
  for (int s = 0; s < spec.brackets; ++s) {
    std::vector<Rung> rungs;
    for (const double m : bracket_milestones(spec, s))
      rungs.push_back(Rung{m, {}, 0});
    brackets_.push_back(std::move(rungs));
  }
  // Ray draws bracket b with probability proportional to e^(number of rungs of b),
  // i.e. e^(-s): brackets that stop early are favoured.
  double total = 0;
  const auto most = static_cast<double>(brackets_.front().size());
  for (const auto& rungs : brackets_) {
    total += std::exp(static_cast<double>(rungs.size()) - most);
    bracket_weights_.push_back(total);
  }
  for (auto& w : bracket_weights_)
    w /= total;
}

std::vector<double> AshaScheduler::milestones(int bracket) const {
  std::vector<double> out;
  for (const auto& rung : brackets_.at(static_cast<std::size_t>(bracket)))
    out.push_back(rung.milestone);
  return out;
}

void AshaScheduler::add_trial(TrialId trial, std::optional<int> bracket) {
  int chosen = 0;
  if (bracket) {
    if (*bracket < 0 || *bracket >= static_cast<int>(brackets_.size()))
      throw InputError("trial " + std::to_string(trial) + ": bracket " + std::to_string(*bracket) +
                       " does not exist (the scheduler has " + std::to_string(brackets_.size()) +
                       ")");
    chosen = *bracket;
  } else if (brackets_.size() > 1) {
    const double u = Xoshiro256(derive_seed(seed_, kBracketStream, trial)).uniform01();
    while (chosen + 1 < static_cast<int>(bracket_weights_.size()) &&
           u >= bracket_weights_[static_cast<std::size_t>(chosen)])
      ++chosen;
  }
  trials_.insert_or_assign(trial, TrialState{chosen, 0});
}

AshaScheduler::TrialState& AshaScheduler::state_of(TrialId trial) {
  const auto it = trials_.find(trial);
  if (it == trials_.end()) throw_unknown_trial(trial);
  return it->second;
}

int AshaScheduler::bracket_of(TrialId trial) const {
  const auto it = trials_.find(trial);
  return it == trials_.end() ? 0 : it->second.bracket;
}

ReportOutcome AshaScheduler::report(TrialId trial, double step, double value) {
  TrialState& state = state_of(trial);
  if (stop_last_trials_ && step >= max_t_)
    return ReportOutcome{SchedulerDecision::Stop, {}, {}, {}, false, {}, {}, {}};
  return judge(state, step, score(value));
}

double AshaScheduler::cutoff(const Rung& rung) const {
  if (rung.values.empty()) return std::nan("");  // only NaN recorded: nanpercentile is NaN
  return linear_percentile(rung.values, ((1.0 - 1.0 / reduction_factor_) * 100.0) / 100.0);
}

ReportOutcome AshaScheduler::judge(TrialState& trial, double step, double s) {
  auto& rungs = brackets_[static_cast<std::size_t>(trial.bracket)];
  // The highest milestone <= step that does not yet hold this trial is judged; a rung
  // skipped earlier can therefore be judged by a later report.
  for (std::size_t k = rungs.size(); k-- > 0;) {
    Rung& rung = rungs[k];
    const std::uint64_t bit = std::uint64_t{1} << k;
    const bool holds = (trial.recorded & bit) != 0;
    // Ray: with stop_last_trials off, a trial already judged at the highest rung it has
    // reached is not sent back to judge skipped lower rungs.
    if (step >= rung.milestone && holds && !stop_last_trials_) break;
    if (step < rung.milestone || holds) continue;
    ReportOutcome outcome{
        SchedulerDecision::Continue, static_cast<int>(k), rung.milestone, {}, false, {}, {}, {}};
    if (!rung.values.empty() || rung.nan_count > 0) {
      const double c = cutoff(rung);
      outcome.cutoff = unscore(c);
      if (s < c) outcome.decision = SchedulerDecision::Stop;
    }
    if (std::isnan(s))
      ++rung.nan_count;
    else
      rung.values.insert(s);
    trial.recorded |= bit;
    return outcome;
  }
  return ReportOutcome{};
}

void AshaScheduler::end_trial(TrialId trial, TrialEnd how, std::optional<Observation> last) {
  const auto it = trials_.find(trial);
  if (it == trials_.end()) return;
  // Like Ray's on_trial_complete, a finished trial's last result counts as one more
  // report; a failed trial is only forgotten.
  if (how != TrialEnd::Failed && last) judge(it->second, last->step, score(last->value));
  trials_.erase(it);
}

SLURMTUNE_STATE(AshaScheduler, brackets_, trials_)

}  // namespace slurmtune::core
