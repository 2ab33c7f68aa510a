#include "cli/results/study_tables.hpp"

#include <cmath>

namespace slurmtune::cli {

std::string enum_name(const std::vector<std::string>& names, std::size_t value) {
  return value < names.size() ? names[value] : "unknown(" + std::to_string(value) + ")";
}

Cell param_cell(const core::ParamValue& value) {
  if (const auto* b = std::get_if<bool>(&value)) return std::string(*b ? "true" : "false");
  if (const auto* i = std::get_if<std::int64_t>(&value)) return *i;
  if (const auto* d = std::get_if<double>(&value)) return *d;
  return std::get<std::string>(value);
}

std::vector<std::string> trial_columns(const core::StudySpec& spec) {
  std::vector<std::string> columns = {
      "id",        "status",     "bracket",    "rung",      "retries", "start_time", "end_time",
      "last_step", "last_value", "best_value", "best_step", "reports", "nodes",      "error"};
  for (const auto& p : spec.space.parameters())
    columns.push_back("config/" + p.name);
  // Several objectives: each one's last reported value, and whether the trial is on
  // the Pareto front (1 or 0); constraints: whether all hold (1 or 0).
  if (spec.multi_objective()) {
    for (const auto& o : spec.objectives)
      columns.push_back("objective/" + o.metric);
    columns.emplace_back("pareto");
  }
  if (!spec.constraints.empty()) columns.emplace_back("feasible");
  return columns;
}

void append_standing(std::vector<Cell>& cells, const core::StudySpec& spec,
                     const store::TrialStanding& standing, bool on_front) {
  if (spec.multi_objective()) {
    for (const double v : standing.objectives)
      cells.emplace_back(v);
    cells.emplace_back(std::int64_t{on_front});
  }
  if (!spec.constraints.empty()) cells.emplace_back(std::int64_t{standing.feasible});
}

std::vector<Cell> trial_cells(const store::TrialRecord& t) {
  std::vector<Cell> cells = {
      t.id,
      enum_name(store::trial_status_names(), static_cast<std::size_t>(t.status)),
      std::int64_t{t.bracket},
      std::int64_t{t.rung},
      std::int64_t{t.retries},
      t.start_time,
      t.end_time,
      t.last_step,
      t.last_value,
      t.best_value,
      t.best_step,
      t.reports,
      t.nodes,
      t.error};
  for (std::size_t p = 0; p < t.config.values.size(); ++p)
    cells.push_back(t.config.is_active(p) ? param_cell(t.config.values[p])
                                          : Cell{std::monostate{}});
  return cells;
}

std::vector<std::string> metric_columns(const core::StudySpec& spec) {
  std::vector<std::string> columns = {"seq", "trial", "step", "time"};
  columns.insert(columns.end(), spec.metrics.begin(), spec.metrics.end());
  return columns;
}

std::vector<Cell> metric_cells(const store::MetricRecord& m) {
  std::vector<Cell> cells = {m.seq, m.trial, m.step, m.time};
  for (const double v : m.values)
    cells.emplace_back(v);
  return cells;
}

std::vector<std::string> event_columns() {
  return {"seq", "time", "trial", "kind", "rung", "step", "milestone", "value", "cutoff"};
}

std::vector<Cell> event_cells(const store::EventRecord& e) {
  return {
      e.seq,       e.time,  e.trial, store::event_kind_name(e.kind), std::int64_t{e.rung}, e.step,
      e.milestone, e.value, e.cutoff};
}

std::vector<std::string> checkpoint_columns() {
  return {"trial", "step", "time", "size", "path"};
}

std::vector<Cell> checkpoint_cells(const store::CheckpointRecord& c) {
  return {c.trial, c.step, c.time, c.size, c.path};
}

std::vector<std::string> exploit_columns(const core::StudySpec& spec) {
  std::vector<std::string> columns = {"seq",   "time",       "trial",     "step",
                                      "donor", "donor_step", "operations"};
  for (const auto& p : spec.space.parameters())
    columns.push_back("config/" + p.name);
  return columns;
}

std::vector<Cell> exploit_cells(const store::ExploitRecord& x) {
  std::vector<Cell> cells = {x.seq, x.time, x.trial, x.step, x.donor, x.donor_step, x.operations};
  for (const auto& v : x.config.values)
    cells.push_back(param_cell(v));
  return cells;
}

std::vector<store::TrialRecord> best_candidates(const std::vector<store::TrialRecord>& trials,
                                                const std::vector<store::TrialStanding>& standings,
                                                bool include_failed) {
  std::vector<store::TrialRecord> out;
  for (const auto& t : trials) {
    if (!include_failed && t.status == store::TrialStatus::Failed) continue;
    if (t.id >= standings.size() || standings[t.id].feasible) out.push_back(t);
  }
  return out;
}

const store::TrialRecord* best_trial(const std::vector<store::TrialRecord>& trials,
                                     core::Mode mode) {
  const store::TrialRecord* best = nullptr;
  for (const auto& t : trials) {
    if (std::isnan(t.best_value)) continue;
    if (!best || (mode == core::Mode::Min ? t.best_value < best->best_value
                                          : t.best_value > best->best_value))
      best = &t;
  }
  return best;
}

}  // namespace slurmtune::cli
