#include "store/objective_values.hpp"

#include <algorithm>
#include <cmath>

#include "core/study/pareto.hpp"

namespace slurmtune::store {
namespace {

std::vector<std::size_t> columns_of(const core::StudySpec& spec,
                                    const std::vector<std::string>& metrics) {
  std::vector<std::size_t> out;
  for (const auto& m : metrics)
    out.push_back(static_cast<std::size_t>(std::find(spec.metrics.begin(), spec.metrics.end(), m) -
                                           spec.metrics.begin()));
  return out;
}

std::vector<double> picked(const std::vector<double>& row,
                           const std::vector<std::size_t>& columns) {
  std::vector<double> out;
  for (const auto c : columns)
    out.push_back(c < row.size() ? row[c] : NAN);
  return out;
}

}  // namespace

std::vector<TrialStanding> trial_standings(const StudyReader& reader, std::size_t trials) {
  const auto& spec = reader.spec();
  std::vector<std::string> objective_metrics, constraint_metrics;
  for (const auto& o : spec.objectives)
    objective_metrics.push_back(o.metric);
  for (const auto& c : spec.constraints)
    constraint_metrics.push_back(c.metric);
  const auto objective_columns = columns_of(spec, objective_metrics);
  const auto constraint_columns = columns_of(spec, constraint_metrics);
  std::vector<core::ObjectiveTracker> last(
      trials, core::ObjectiveTracker(objective_columns.size(), constraint_columns.size()));
  reader.for_each_metric([&](const MetricRecord& m) {
    if (m.trial < last.size())
      last[m.trial].update(picked(m.values, objective_columns),
                           picked(m.values, constraint_columns));
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
