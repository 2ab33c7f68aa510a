#include "store/objective_values.hpp"

#include <algorithm>
#include <cmath>

#include "core/objectives/pareto.hpp"

namespace slurmtune::store {

namespace {

// A constraint's value is NaN until its metric is reported.
std::optional<std::vector<double>> reported(const std::vector<double>& constraints) {
  for (const double v : constraints)
    if (std::isnan(v)) return std::nullopt;
  return constraints;
}

}  // namespace

std::vector<TrialStanding> trial_standings(const StudyReader& reader,
                                           const std::vector<TrialRecord>& trials) {
  if (!reader.layout().has_objective_columns())
    return trial_standings_from_metrics(reader, trials.size());
  const bool constrained = !reader.spec().constraints.empty();
  std::vector<TrialStanding> out(trials.size());
  for (std::size_t t = 0; t < trials.size(); ++t) {
    out[t].objectives = trials[t].objectives;
    if (!constrained) continue;
    out[t].constraints = reported(trials[t].constraints);
    out[t].feasible =
        out[t].constraints && core::is_feasible(core::ParetoPoint{{}, out[t].constraints});
  }
  return out;
}

std::vector<TrialStanding> trial_standings_from_metrics(const StudyReader& reader,
                                                        std::size_t trials) {
  const auto& spec = reader.spec();
  const core::ObjectiveColumns columns(spec.metrics, spec.objectives, spec.constraints);
  std::vector<core::ObjectiveTracker> last(
      trials, core::ObjectiveTracker(spec.objectives.size(), spec.constraints.size()));
  reader.for_each_metric([&](const MetricRecord& m) {
    if (m.trial < last.size()) last[m.trial].update(m.values, columns);
  });
  std::vector<TrialStanding> out(trials);
  for (std::size_t t = 0; t < trials; ++t) {
    out[t].objectives = last[t].objectives();
    if (spec.constraints.empty()) continue;
    out[t].constraints = last[t].constraint_values(spec.constraints);
    out[t].feasible =
        out[t].constraints && core::is_feasible(core::ParetoPoint{{}, out[t].constraints});
  }
  return out;
}

std::vector<std::uint64_t> pareto_front(const core::StudySpec& spec,
                                        const std::vector<TrialRecord>& trials,
                                        const std::vector<TrialStanding>& standings) {
  std::vector<core::ParetoPoint> points;
  std::vector<std::uint64_t> ids;
  for (const auto& t : trials) {
    if (t.status != TrialStatus::Completed || t.id >= standings.size()) continue;
    const TrialStanding& s = standings[t.id];
    if (!s.feasible) continue;
    core::ParetoPoint p;
    bool complete = true;
    for (std::size_t k = 0; k < s.objectives.size(); ++k) {
      complete = complete && !std::isnan(s.objectives[k]);
      p.loss.push_back(spec.objectives[k].mode == core::Mode::Max ? -s.objectives[k]
                                                                  : s.objectives[k]);
    }
    if (!complete) continue;
    points.push_back(std::move(p));
    ids.push_back(t.id);
  }
  std::vector<std::uint64_t> front;
  for (const auto i : core::pareto_front(points, false))
    front.push_back(ids[i]);
  return front;
}

}  // namespace slurmtune::store
