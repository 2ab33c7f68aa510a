#include "store/recorded_curves.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "core/number_text.hpp"
#include "store/study_reader.hpp"

namespace slurmtune::store {
namespace {

std::string names_of(const core::SearchSpace& space) {
  std::vector<std::string> names;
  for (const auto& p : space.parameters())
    names.push_back(p.name);
  return core::join_names(names);
}

// Which recorded parameter feeds each of the study's, checked both ways.
std::vector<std::size_t> map_parameters(const std::string& path, const core::SearchSpace& recorded,
                                        const core::SearchSpace& wanted) {
  std::vector<std::size_t> from;
  for (const auto& p : wanted.parameters()) {
    const auto j = recorded.index_of(p.name);
    if (!j)
      throw InputError(path + ": the results file records no parameter '" + p.name +
                       "' (it records: " + names_of(recorded) +
                       "); rename the [search] parameter to a recorded one");
    from.push_back(*j);
  }
  for (const auto& p : recorded.parameters())
    if (!wanted.index_of(p.name))
      throw InputError(path + ": the results file records the parameter '" + p.name +
                       "', which [search] does not declare; add it to [search] (a constant "
                       "keeps only the trials with that value)");
  return from;
}

// The recorded value in the type the study's domain expects (an integer recorded as a
// real, a choice value); left as it is where it has none (then outside the space).
core::ParamValue retyped(const core::Domain& domain, const core::ParamValue& value) {
  if (const auto v = domain.parse(core::to_text(value))) return *v;
  return value;
}

core::TrialEnd recorded_end(TrialStatus status) {
  switch (status) {
    case TrialStatus::Completed:
      return core::TrialEnd::Completed;
    case TrialStatus::Failed:
      return core::TrialEnd::Failed;
    default:
      return core::TrialEnd::Stopped;
  }
}

struct TrialCurve {
  core::Configuration config;
  std::vector<double> launches;  // Start, Resume, Retry times: attempts (re)begin
  std::optional<double> last_report;
  std::set<double> steps_seen;
  std::string run;  // the repeat label: one run per recorded trial
};

}  // namespace

core::CurveTable read_recorded_curves(const std::string& path, const core::StudySpec& study) {
  const StudyReader reader(path);
  const auto& recorded = reader.spec();
  const auto metric_it = std::find(recorded.metrics.begin(), recorded.metrics.end(), study.metric);
  if (metric_it == recorded.metrics.end())
    throw InputError(path + ": the results file records no metric '" + study.metric +
                     "' (it records: " + core::join_names(recorded.metrics) +
                     "); set [study] metric to a recorded one");
  const auto metric = static_cast<std::size_t>(metric_it - recorded.metrics.begin());
  const auto from = map_parameters(path, recorded.space, study.space);

  core::CurveTableBuilder builder(path, study.space, core::CurveTableBuilder::Durations::PerStep);
  std::map<std::uint64_t, TrialCurve> trials;
  std::vector<std::pair<std::uint64_t, core::TrialEnd>> ends;
  for (const auto& t : reader.trials()) {
    TrialCurve& curve = trials[t.id];
    for (std::size_t j = 0; j < from.size(); ++j)
      curve.config.values.push_back(
          retyped(study.space.parameters()[j].domain, t.config.values.at(from[j])));
    curve.run = "trial " + std::to_string(t.id);
    if (std::isfinite(t.start_time)) curve.launches.push_back(t.start_time);
    ends.emplace_back(t.id, recorded_end(t.status));
  }
  for (const auto& e : reader.events())
    if (e.kind == EventKind::Start || e.kind == EventKind::Resume || e.kind == EventKind::Retry)
      if (const auto it = trials.find(e.trial); it != trials.end() && std::isfinite(e.time))
        it->second.launches.push_back(e.time);
  // A requeued study's next session relaunches its trials (wall-clock files only).
  std::vector<double> sessions;
  if (reader.attribute("clock") != "virtual")
    for (const auto& s : reader.sessions())
      sessions.push_back(s.started);
  for (auto& [id, curve] : trials) {
    curve.launches.insert(curve.launches.end(), sessions.begin(), sessions.end());
    std::sort(curve.launches.begin(), curve.launches.end());
  }

  reader.for_each_metric([&](const MetricRecord& row) {
    const auto it = trials.find(row.trial);
    if (it == trials.end()) return;
    TrialCurve& curve = it->second;
    if (!std::isfinite(row.time)) return;
    const auto launch = std::upper_bound(curve.launches.begin(), curve.launches.end(), row.time);
    double since = launch == curve.launches.begin() ? row.time : *std::prev(launch);
    if (curve.last_report) since = std::max(since, *curve.last_report);
    curve.last_report = row.time;
    // A step re-run after a failed or killed attempt is kept once, but its time still
    // marks where the next step began.
    if (!curve.steps_seen.insert(row.step).second) return;
    builder.add("trial " + std::to_string(row.trial) + ", metrics row " + std::to_string(row.seq),
                curve.config, curve.run, row.step, row.values.at(metric),
                std::max(0.0, row.time - since));
  });
  for (const auto& [id, end] : ends)
    builder.set_end(trials[id].config, trials[id].run, end);
  return builder.finish();
}

}  // namespace slurmtune::store
