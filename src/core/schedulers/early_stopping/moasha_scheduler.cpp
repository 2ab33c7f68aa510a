#include "core/schedulers/early_stopping/moasha_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "core/objectives/pareto.hpp"
#include "core/schedulers/rung_ladder.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {
namespace {

// Distance between two points with each objective divided by its range (1 where all
// points agree), so that objectives in different units weigh alike.
double scaled_distance(const std::vector<double>& a, const std::vector<double>& b,
                       const std::vector<double>& range) {
  double sum = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double d = (a[k] - b[k]) / range[k];
    sum += d * d;
  }
  return std::sqrt(sum);
}

// The epsilon-net order of one front: the point best in the first objective, then the
// point whose nearest chosen point is farthest, and so on.
std::vector<std::size_t> epsilon_net(const std::vector<std::size_t>& front,
                                     const std::vector<std::vector<double>>& points,
                                     const std::vector<double>& range) {
  const std::size_t n = front.size();
  std::vector<bool> taken(n, false);
  std::vector<double> nearest(n, std::numeric_limits<double>::infinity());
  std::size_t last = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (points[front[i]][0] < points[front[last]][0]) last = i;
  std::vector<std::size_t> order{front[last]};
  taken[last] = true;
  while (order.size() < n) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < n; ++i) {
      if (taken[i]) continue;
      nearest[i] =
          std::min(nearest[i], scaled_distance(points[front[i]], points[front[last]], range));
      if (!best || nearest[i] > nearest[*best]) best = i;
    }
    last = *best;
    taken[last] = true;
    order.push_back(front[last]);
  }
  return order;
}

}  // namespace

std::vector<std::size_t> moasha_order(const std::vector<std::vector<double>>& points) {
  if (points.empty()) return {};
  std::vector<double> low = points.front(), high = points.front();
  for (const auto& p : points)
    for (std::size_t k = 0; k < p.size(); ++k) {
      low[k] = std::min(low[k], p[k]);
      high[k] = std::max(high[k], p[k]);
    }
  std::vector<double> range(low.size());
  for (std::size_t k = 0; k < range.size(); ++k)
    range[k] = high[k] > low[k] ? high[k] - low[k] : 1.0;
  std::vector<std::size_t> remaining(points.size());
  for (std::size_t i = 0; i < remaining.size(); ++i)
    remaining[i] = i;
  std::vector<std::size_t> order;
  while (!remaining.empty()) {
    std::vector<std::size_t> front, rest;
    for (const auto i : remaining) {
      bool dominated = false;
      for (const auto j : remaining)
        dominated = dominated || dominates(points[j], points[i]);
      (dominated ? rest : front).push_back(i);
    }
    const auto net = epsilon_net(front, points, range);
    order.insert(order.end(), net.begin(), net.end());
    remaining = std::move(rest);
  }
  return order;
}

MoashaScheduler::MoashaScheduler(const SchedulerSpec& spec)
    : Scheduler(Mode::Min),
      max_t_(spec.max_t),
      reduction_factor_(spec.reduction_factor),
      objectives_(spec.objectives),
      columns_(spec.metric_columns, spec.objectives, {}) {
  if (spec.brackets != 1) throw InputError("MO-ASHA has one bracket; set brackets = 1");
  for (const double m : bracket_milestones(spec))
    rungs_.push_back(Rung{m, {}});
}

void MoashaScheduler::add_trial(TrialId trial, std::optional<int> /*bracket*/) {
  trials_.emplace(trial, TrialState{ObjectiveTracker(objectives_.size(), 0), 0});
}

void MoashaScheduler::reported_metrics(TrialId trial, double /*step*/,
                                       const std::vector<double>& row) {
  const auto it = trials_.find(trial);
  if (it == trials_.end()) return;
  it->second.reported.update(row, columns_);
}

ReportOutcome MoashaScheduler::report(TrialId trial, double step, double /*value*/) {
  const auto it = trials_.find(trial);
  if (it == trials_.end()) return {};
  TrialState& t = it->second;
  // Judged at the highest milestone <= step that does not hold it yet, once every
  // objective has a value (until then it is not judged, and continues).
  if (!t.reported.complete()) return {};
  for (std::size_t k = rungs_.size(); k-- > 0;) {
    Rung& rung = rungs_[k];
    const std::uint64_t bit = std::uint64_t{1} << k;
    if (step < rung.milestone || (t.recorded & bit) != 0) continue;
    std::vector<double> loss = t.reported.objectives();
    for (std::size_t o = 0; o < loss.size(); ++o)
      if (objectives_[o].mode == Mode::Max) loss[o] = -loss[o];
    rung.losses.push_back(std::move(loss));
    t.recorded |= bit;
    const auto order = moasha_order(rung.losses);
    const std::size_t judged = rung.losses.size();
    const std::size_t position =
        static_cast<std::size_t>(std::find(order.begin(), order.end(), judged - 1) - order.begin());
    // The first judged / reduction_factor positions continue (at least the first).
    const auto kept =
        static_cast<std::size_t>(std::ceil(static_cast<double>(judged) / reduction_factor_));
    ReportOutcome outcome;
    outcome.rung = static_cast<int>(k);
    outcome.milestone = rung.milestone;
    outcome.standing = RungStanding{position, judged, kept};
    outcome.decision = position < kept ? SchedulerDecision::Continue : SchedulerDecision::Stop;
    return outcome;
  }
  return {};
}

void MoashaScheduler::end_trial(TrialId trial, TrialEnd /*how*/,
                                std::optional<Observation> /*last*/) {
  trials_.erase(trial);
}

SLURMTUNE_STATE(MoashaScheduler, rungs_, trials_)

}  // namespace slurmtune::core
