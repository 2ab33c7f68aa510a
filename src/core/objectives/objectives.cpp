#include "core/objectives/objectives.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/text.hpp"

namespace slurmtune::core {

double Constraint::value(double metric_value) const {
  return bound == Bound::AtMost ? metric_value - limit : limit - metric_value;
}

std::string Constraint::text() const {
  return metric + (bound == Bound::AtMost ? " <= " : " >= ") + format_double(limit);
}

std::optional<Constraint> parse_constraint(std::string_view text, std::string& why) {
  // The operator is the last "<=" or ">=": a metric name may hold '<', '>' or '=', the
  // number after it cannot.
  const auto at_most = text.rfind("<="), at_least = text.rfind(">=");
  const auto at = at_most == std::string_view::npos    ? at_least
                  : at_least == std::string_view::npos ? at_most
                                                       : std::max(at_most, at_least);
  if (at == std::string_view::npos) {
    why = "must read \"metric <= number\" or \"metric >= number\"";
    return std::nullopt;
  }
  const auto trim = [](std::string_view s) {
    while (!s.empty() && s.front() == ' ')
      s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ')
      s.remove_suffix(1);
    return s;
  };
  Constraint c;
  c.metric = std::string(trim(text.substr(0, at)));
  c.bound = text[at] == '<' ? Constraint::Bound::AtMost : Constraint::Bound::AtLeast;
  const std::string_view number = trim(text.substr(at + 2));
  if (c.metric.empty()) {
    why = text[at] == '<' ? "names no metric before '<='" : "names no metric before '>='";
    return std::nullopt;
  }
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), c.limit);
  if (number.empty() || error != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(c.limit)) {
    why = std::string(number);
    why.insert(0, 1, '\'');
    why += "' is not a finite number";
    return std::nullopt;
  }
  return c;
}

ObjectiveColumns::ObjectiveColumns(const std::vector<std::string>& metric_columns,
                                   const std::vector<StudyObjective>& objective_list,
                                   const std::vector<Constraint>& constraint_list) {
  const auto column = [&metric_columns](const std::string& metric) {
    const auto it = std::find(metric_columns.begin(), metric_columns.end(), metric);
    if (it == metric_columns.end())
      throw UsageError("metric '" + metric + "' is not a column of the study's reports");
    return static_cast<std::size_t>(it - metric_columns.begin());
  };
  for (const auto& o : objective_list)
    objectives.push_back(column(o.metric));
  for (const auto& c : constraint_list)
    constraints.push_back(column(c.metric));
}

double ObjectiveTracker::nan() {
  return std::numeric_limits<double>::quiet_NaN();
}

void ObjectiveTracker::update(const std::vector<double>& objective_values,
                              const std::vector<double>& constraint_metric_values) {
  for (std::size_t k = 0; k < objectives_.size() && k < objective_values.size(); ++k)
    if (!std::isnan(objective_values[k])) objectives_[k] = objective_values[k];
  for (std::size_t k = 0; k < constraint_metrics_.size() && k < constraint_metric_values.size();
       ++k)
    if (!std::isnan(constraint_metric_values[k]))
      constraint_metrics_[k] = constraint_metric_values[k];
}

void ObjectiveTracker::update(const std::vector<double>& row, const ObjectiveColumns& columns) {
  const auto picked = [&row](const std::vector<std::size_t>& at) {
    std::vector<double> out;
    for (const auto c : at)
      out.push_back(c < row.size() ? row[c] : nan());
    return out;
  };
  update(picked(columns.objectives), picked(columns.constraints));
}

bool ObjectiveTracker::complete() const {
  for (const double v : objectives_)
    if (std::isnan(v)) return false;
  return true;
}

std::optional<std::vector<double>> ObjectiveTracker::constraint_values(
    const std::vector<Constraint>& constraints) const {
  std::vector<double> out;
  for (std::size_t k = 0; k < constraints.size(); ++k) {
    if (std::isnan(constraint_metrics_[k])) return std::nullopt;
    out.push_back(constraints[k].value(constraint_metrics_[k]));
  }
  return out;
}

}  // namespace slurmtune::core
