#include "core/simulation/curve_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/steps.hpp"

namespace slurmtune::core {

double CurveTable::best_value(Mode mode) const {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (const auto& point : points_) {
    const double v = point.value;
    if (std::isnan(v)) continue;
    if (std::isnan(best) || (mode == Mode::Min ? v < best : v > best)) best = v;
  }
  return best;
}

CurveTableBuilder::CurveTableBuilder(std::string source, const SearchSpace& space,
                                     Durations durations)
    : source_(std::move(source)), space_(&space), durations_(durations) {}

std::size_t CurveTableBuilder::config_index(Configuration config) {
  const auto [it, inserted] = config_ids_.try_emplace(config.values, configs_.size());
  if (inserted) configs_.push_back(std::move(config));
  return it->second;
}

void CurveTableBuilder::add(const std::string& where, Configuration config,
                            const std::string& repeat, double step, double value, double duration,
                            std::optional<TrialEnd> end) {
  if (!valid_step(step))
    throw InputError(source_ + ": " + where + ": the step " + step_range_refusal(step));
  if (!std::isfinite(duration) || duration < 0)
    throw InputError(source_ + ": " + where + ": the step's duration is " +
                     format_double(duration) + "; durations must be finite and >= 0 seconds");
  const std::size_t id = config_index(std::move(config));
  runs_[RunKey{id, repeat}].rows.push_back(Row{step, value, duration, where, end});
}

void CurveTableBuilder::set_end(const Configuration& config, const std::string& repeat,
                                TrialEnd end) {
  const auto it = config_ids_.find(config.values);
  if (it == config_ids_.end()) return;  // a run without rows is not a curve
  const auto run = runs_.find(RunKey{it->second, repeat});
  if (run != runs_.end()) run->second.end = end;
}

namespace {

std::string run_label(const SearchSpace& space, const Configuration& config,
                      const std::string& repeat) {
  std::string label = "configuration " + space.to_json(config);
  if (!repeat.empty()) label += " (repeat " + repeat + ")";
  return label;
}

// Why `config` lies outside the search space, or "" when it does not.
std::string outside_reason(const SearchSpace& space, const Configuration& config) {
  const auto& params = space.parameters();
  for (std::size_t j = 0; j < params.size(); ++j)
    if (!params[j].domain.admits(config.values[j]))
      return params[j].name + " = " + to_text(config.values[j]) + " is outside " +
             params[j].domain.describe();
  return "";
}

}  // namespace

void CurveTableBuilder::add_curve(CurveTable& table, std::size_t kept_config, const RunKey& key,
                                  Run& run) const {
  auto& rows = run.rows;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.step < b.step; });
  if (rows.back().end) run.end = *rows.back().end;
  // Named in errors only, so built only for them.
  const auto label = [&] { return run_label(*space_, configs_[key.first], key.second); };
  double previous_elapsed = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    if (i > 0 && rows[i - 1].step == row.step)
      throw InputError(source_ + ": " + rows[i - 1].where + " and " + row.where +
                       " both give step " + format_double(row.step) + " of " + label() +
                       "; keep one row per step");
    double seconds = row.duration;
    if (durations_ == Durations::Cumulative) {
      if (row.duration < previous_elapsed)
        throw InputError(source_ + ": " + row.where + ": elapsed_seconds " +
                         format_double(row.duration) + " at step " + format_double(row.step) +
                         " is less than " + format_double(previous_elapsed) +
                         " at the step before (" + rows[i - 1].where + ") of " + label() +
                         "; elapsed_seconds is cumulative and must not decrease");
      seconds = row.duration - previous_elapsed;
      previous_elapsed = row.duration;
    }
    table.points_.push_back(CurvePoint{row.step, row.value, seconds, {}});
  }
  table.curves_.push_back(
      CurveTable::Curve{kept_config, static_cast<std::uint32_t>(table.points_.size() - rows.size()),
                        static_cast<std::uint32_t>(rows.size()), run.end});
}

CurveTable CurveTableBuilder::finish() {
  CurveTable table;
  table.source_ = source_;
  std::vector<std::size_t> kept(configs_.size(), std::numeric_limits<std::size_t>::max());
  for (std::size_t c = 0; c < configs_.size(); ++c) {
    if (const auto why = outside_reason(*space_, configs_[c]); !why.empty()) {
      if (table.excluded_ == 0) table.excluded_example_ = why;
      ++table.excluded_;
      continue;
    }
    kept[c] = table.configs_.size();
    table.configs_.push_back(configs_[c]);
  }
  std::size_t points = 0;
  for (const auto& [key, run] : runs_)
    points += run.rows.size();
  if (points >= std::numeric_limits<std::uint32_t>::max())
    throw InputError(source_ + ": " + std::to_string(points) +
                     " recorded reports are more than a table may hold (2^32 - 1)");
  // Runs are ordered by configuration, so each configuration's curves are contiguous.
  table.first_curve_.assign(table.configs_.size() + 1, 0);
  for (auto& [key, run] : runs_)
    if (kept[key.first] != std::numeric_limits<std::size_t>::max()) {
      add_curve(table, kept[key.first], key, run);
      table.first_curve_[kept[key.first] + 1] = static_cast<std::uint32_t>(table.curves_.size());
    }
  for (std::size_t c = 1; c < table.first_curve_.size(); ++c)  // every configuration has a run
    table.first_curve_[c] = std::max(table.first_curve_[c], table.first_curve_[c - 1]);
  if (table.configs_.empty())
    throw InputError(source_ + ": no recorded configuration lies inside the study's search space" +
                     (table.excluded_example_.empty() ? std::string(" (the table is empty)")
                                                      : " (e.g. " + table.excluded_example_ + ")") +
                     "; widen [search] to the recorded values");
  return table;
}

}  // namespace slurmtune::core
