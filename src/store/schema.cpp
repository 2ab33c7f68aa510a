#include "store/schema.hpp"

#include <algorithm>
#include <set>

#include "core/study/checkpoint_retention.hpp"

namespace slurmtune::store {

const std::vector<std::string>& trial_status_names() {
  static const std::vector<std::string> names = {"pending",   "running", "paused",
                                                 "completed", "stopped", "failed"};
  return names;
}

std::vector<std::string> event_kind_names(std::int64_t schema_version) {
  std::vector<std::string> names = {"start",  "resume",    "continue",   "pause",
                                    "stop",   "completed", "stopped",    "failed",
                                    "closed", "retry",     "checkpoint", "reopen"};
  if (schema_version < 8) names.pop_back();  // `reopen` came with schema 8
  return names;
}

const std::string& event_kind_name(EventKind kind) {
  static const std::vector<std::string> names = event_kind_names();
  static const std::string unknown = "unknown";
  const auto index = static_cast<std::size_t>(kind);
  return index < names.size() ? names[index] : unknown;
}

TrialStatus end_status(core::TrialEnd how) {
  switch (how) {
    case core::TrialEnd::Completed:
      return TrialStatus::Completed;
    case core::TrialEnd::Stopped:
      return TrialStatus::Stopped;
    case core::TrialEnd::Failed:
      break;
  }
  return TrialStatus::Failed;
}

EventKind end_event(core::TrialEnd how) {
  switch (how) {
    case core::TrialEnd::Completed:
      return EventKind::Completed;
    case core::TrialEnd::Stopped:
      return EventKind::Stopped;
    case core::TrialEnd::Failed:
      break;
  }
  return EventKind::Failed;
}

std::optional<core::TrialEnd> trial_end_of(EventKind kind) {
  switch (kind) {
    case EventKind::Completed:
      return core::TrialEnd::Completed;
    case EventKind::Stopped:
      return core::TrialEnd::Stopped;
    case EventKind::Failed:
      return core::TrialEnd::Failed;
    default:
      return std::nullopt;
  }
}

ParamColumn param_column(const core::Domain& d) {
  if (!d.is_listed())
    return ParamColumn{
        d.is_integer() ? ParamColumn::Kind::Integer : ParamColumn::Kind::Real, {}, 0, {}};
  const auto all = [&d](auto predicate) {
    return std::all_of(d.values.begin(), d.values.end(), predicate);
  };
  const auto is = [](std::size_t index) {
    return [index](const core::ParamValue& v) { return v.index() == index; };
  };
  if (all(is(0))) return ParamColumn{ParamColumn::Kind::Bool, {"FALSE", "TRUE"}, 0, {}};
  if (all(is(1))) return ParamColumn{ParamColumn::Kind::Integer, {}, 0, {}};
  if (all([](const auto& v) { return v.index() == 1 || v.index() == 2; }))
    return ParamColumn{ParamColumn::Kind::Real, {}, 0, {}};
  std::vector<std::string> texts;
  for (const auto& v : d.values)
    texts.push_back(core::to_text(v));
  const std::set<std::string> distinct(texts.begin(), texts.end());
  const bool enumerable = all(is(3)) && texts.size() <= 255 && distinct.size() == texts.size() &&
                          !distinct.contains("");
  if (enumerable) return ParamColumn{ParamColumn::Kind::Category, texts, 0, {}};
  std::size_t longest = 1;
  for (const auto& t : texts)
    longest = std::max(longest, t.size());
  return ParamColumn{ParamColumn::Kind::Text, {}, longest, d.values};
}

const std::vector<std::string>& suggestion_origin_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    // In the enum's order: the results file's enum values are its numbers (Enqueued,
    // the newest, last, so that older files read the same).
    for (const auto o : {core::SuggestionOrigin::Blind, core::SuggestionOrigin::Startup,
                         core::SuggestionOrigin::Random, core::SuggestionOrigin::Model,
                         core::SuggestionOrigin::Enqueued})
      out.emplace_back(core::to_string(o));
    return out;
  }();
  return names;
}

namespace {

// One config/<name> column per parameter, typed by its domain.
void add_param_columns(RowLayout& table, const core::SearchSpace& space) {
  for (const auto& p : space.parameters()) {
    const ParamColumn column = param_column(p.domain);
    const std::string name = "config/" + p.name;
    switch (column.kind) {
      case ParamColumn::Kind::Real:
        table.add(name, FieldKind::F64);
        break;
      case ParamColumn::Kind::Integer:
        table.add(name, FieldKind::I64);
        break;
      case ParamColumn::Kind::Bool:
      case ParamColumn::Kind::Category:
        table.add(name, FieldKind::Enum8, 0, column.categories);
        break;
      case ParamColumn::Kind::Text:
        table.add(name, FieldKind::FixedString, column.text_size);
        break;
    }
  }
}

// The /metrics column (counted from the first metric) of `metric`, one of the study's.
std::size_t metric_index(const core::StudySpec& spec, const std::string& metric) {
  return static_cast<std::size_t>(std::find(spec.metrics.begin(), spec.metrics.end(), metric) -
                                  spec.metrics.begin());
}

}  // namespace

StudyLayout::StudyLayout(const core::StudySpec& spec, std::int64_t schema_version) {
  t.id = trials.add("id", FieldKind::U64);
  t.status = trials.add("status", FieldKind::Enum8, 0, trial_status_names());
  t.bracket = trials.add("bracket", FieldKind::I32);
  t.rung = trials.add("rung", FieldKind::I32);
  t.retries = trials.add("retries", FieldKind::I32);
  t.start_time = trials.add("start_time", FieldKind::F64);
  t.end_time = trials.add("end_time", FieldKind::F64);
  t.last_step = trials.add("last_step", FieldKind::F64);
  t.last_value = trials.add("last_value", FieldKind::F64);
  t.best_value = trials.add("best_value", FieldKind::F64);
  t.best_step = trials.add("best_step", FieldKind::F64);
  t.reports = trials.add("reports", FieldKind::U64);
  t.nodes = trials.add("nodes", FieldKind::FixedString, 64);
  t.error = trials.add("error", FieldKind::FixedString, kErrorBytes);
  if (schema_version >= 2) {
    std::vector<std::string> origins = suggestion_origin_names();
    if (schema_version < 6) origins.pop_back();  // `enqueued` came with schema 6
    t.origin = trials.add("origin", FieldKind::Enum8, 0, origins);
    // Where the sampler's random streams stood after this suggestion: resume restores it.
    t.sampler_words = trials.add("sampler_words", FieldKind::U64);
    t.startup_words = trials.add("startup_words", FieldKind::U64);
  }
  t.first_param = trials.fields().size();
  add_param_columns(trials, spec.space);
  for (const auto& p : spec.space.parameters())
    params.push_back(param_column(p.domain));
  // Schema 6: whether a conditional parameter exists in each trial (spaces before it had
  // none).
  for (const auto& p : spec.space.parameters())
    t.active.push_back(
        p.when.empty() || schema_version < 6
            ? kAbsent
            : trials.add("active/" + p.name, FieldKind::Enum8, 0, {"FALSE", "TRUE"}));

  // Schema 7: each constraint's value at the trial's last report of its metric, and
  // whether all of them hold.
  if (schema_version >= 7 && !spec.constraints.empty()) {
    for (const auto& constraint : spec.constraints) {
      t.constraints.push_back(trials.add("constraint/" + constraint.text(), FieldKind::F64));
      constraint_metrics.push_back(metric_index(spec, constraint.metric));
    }
    t.feasible = trials.add("feasible", FieldKind::Enum8, 0, {"FALSE", "TRUE"});
  }
  // Schema 10: each objective's last reported value, the rest of a trial's standing.
  if (schema_version >= 10) {
    t.best_seq = trials.add("best_seq", FieldKind::U64);
    for (const auto& objective : spec.objectives) {
      t.objectives.push_back(trials.add("objective/" + objective.metric, FieldKind::F64));
      objective_metrics.push_back(metric_index(spec, objective.metric));
    }
  }
  if (schema_version >= 11) t.last_time = trials.add("last_time", FieldKind::F64);

  m.seq = metrics.add("seq", FieldKind::U64);
  m.trial = metrics.add("trial", FieldKind::U64);
  m.step = metrics.add("step", FieldKind::F64);
  m.time = metrics.add("time", FieldKind::F64);
  m.first_metric = metrics.fields().size();
  for (const auto& name : spec.metrics)
    metrics.add(name, FieldKind::F64);

  e.seq = events.add("seq", FieldKind::U64);
  e.time = events.add("time", FieldKind::F64);
  e.trial = events.add("trial", FieldKind::U64);
  e.kind = events.add("kind", FieldKind::Enum8, 0, event_kind_names(schema_version));
  reopens = schema_version >= 8;
  e.rung = events.add("rung", FieldKind::I32);
  e.step = events.add("step", FieldKind::F64);
  e.milestone = events.add("milestone", FieldKind::F64);
  e.value = events.add("value", FieldKind::F64);
  e.cutoff = events.add("cutoff", FieldKind::F64);
  if (schema_version >= 5) {
    e.predicted_at = events.add("predicted_at", FieldKind::F64);
    e.predicted_mean = events.add("predicted_mean", FieldKind::F64);
    e.predicted_lower = events.add("predicted_lower", FieldKind::F64);
    e.predicted_upper = events.add("predicted_upper", FieldKind::F64);
  }

  c.trial = checkpoints.add("trial", FieldKind::U64);
  c.step = checkpoints.add("step", FieldKind::F64);
  c.time = checkpoints.add("time", FieldKind::F64);
  c.size = checkpoints.add("size", FieldKind::U64);
  c.path = checkpoints.add("path", FieldKind::FixedString,
                           schema_version >= 4 ? kPathBytes : kShortPathBytes);

  s.started = sessions.add("started", FieldKind::F64);
  s.host = sessions.add("host", FieldKind::FixedString, 64);
  s.slurm_job_id = sessions.add("slurm_job_id", FieldKind::FixedString, 32);
  s.version = sessions.add("version", FieldKind::FixedString, 16);
  s.first_seq = sessions.add("first_seq", FieldKind::U64);

  k.next_seq = commit.add("next_seq", FieldKind::U64);
  k.trials = commit.add("trials", FieldKind::U64);
  k.metrics = commit.add("metrics", FieldKind::U64);
  k.events = commit.add("events", FieldKind::U64);
  k.checkpoints = commit.add("checkpoints", FieldKind::U64);
  k.sessions = commit.add("sessions", FieldKind::U64);
  k.time = commit.add("time", FieldKind::F64);
  if (schema_version >= 9) {
    k.loop_recent_ms = commit.add("loop_recent_ms", FieldKind::F64);
    k.loop_recent_work =
        commit.add("loop_recent_work", FieldKind::Enum8, 0, core::loop_work_names());
    k.loop_recent_busy = commit.add("loop_recent_busy", FieldKind::F64);
    k.loop_longest_ms = commit.add("loop_longest_ms", FieldKind::F64);
    k.loop_longest_work =
        commit.add("loop_longest_work", FieldKind::Enum8, 0, core::loop_work_names());
    k.loop_turns = commit.add("loop_turns", FieldKind::U64);
    k.loop_over_10ms = commit.add("loop_over_10ms", FieldKind::U64);
    k.loop_over_100ms = commit.add("loop_over_100ms", FieldKind::U64);
    k.loop_over_1s = commit.add("loop_over_1s", FieldKind::U64);
  }
  if (schema_version < 3) return;
  k.exploits = commit.add("exploits", FieldKind::U64);
  x.seq = exploits.add("seq", FieldKind::U64);
  x.time = exploits.add("time", FieldKind::F64);
  x.trial = exploits.add("trial", FieldKind::U64);
  x.step = exploits.add("step", FieldKind::F64);
  x.donor = exploits.add("donor", FieldKind::U64);
  x.donor_step = exploits.add("donor_step", FieldKind::F64);
  x.operations = exploits.add("operations", FieldKind::FixedString, 256);
  x.first_param = exploits.fields().size();
  add_param_columns(exploits, spec.space);
  if (schema_version < 10) return;
  k.removals = commit.add("removed_checkpoints", FieldKind::U64);
  r.trial = removals.add("trial", FieldKind::U64);
  r.step = removals.add("step", FieldKind::F64);
  r.time = removals.add("time", FieldKind::F64);
  r.size = removals.add("size", FieldKind::U64);
  r.path = removals.add("path", FieldKind::FixedString, kPathBytes);
  r.reason = removals.add("reason", FieldKind::Enum8, 0, core::checkpoint_removal_reason_names());
  if (schema_version < 11) return;
  k.improvements = commit.add("improvements", FieldKind::U64);
  i.seq = improvements.add("seq", FieldKind::U64);
  i.trial = improvements.add("trial", FieldKind::U64);
  i.time = improvements.add("time", FieldKind::F64);
  i.value = improvements.add("value", FieldKind::F64);
}

void put_param(const StudyLayout& layout, const RowLayout& table, std::size_t first, std::byte* row,
               std::size_t param, const core::ParamValue& value) {
  const std::size_t field = first + param;
  const ParamColumn& column = layout.params[param];
  switch (column.kind) {
    case ParamColumn::Kind::Real:
      table.put_f64(row, field,
                    std::holds_alternative<double>(value)
                        ? std::get<double>(value)
                        : static_cast<double>(std::get<std::int64_t>(value)));
      break;
    case ParamColumn::Kind::Integer:
      table.put_i64(row, field, std::get<std::int64_t>(value));
      break;
    case ParamColumn::Kind::Bool:
      table.put_enum(row, field, std::get<bool>(value) ? 1 : 0);
      break;
    case ParamColumn::Kind::Category: {
      const auto& names = column.categories;
      const auto it = std::find(names.begin(), names.end(), std::get<std::string>(value));
      table.put_enum(row, field, static_cast<std::uint8_t>(it - names.begin()));
      break;
    }
    case ParamColumn::Kind::Text:
      table.put_string(row, field, core::to_text(value));
      break;
  }
}

core::ParamValue get_param(const StudyLayout& layout, const RowLayout& table, std::size_t first,
                           const std::byte* row, std::size_t param) {
  const std::size_t field = first + param;
  const ParamColumn& column = layout.params[param];
  switch (column.kind) {
    case ParamColumn::Kind::Real:
      return table.get<double>(row, field);
    case ParamColumn::Kind::Integer:
      return table.get<std::int64_t>(row, field);
    case ParamColumn::Kind::Bool:
      return table.get<std::uint8_t>(row, field) != 0;
    case ParamColumn::Kind::Category: {
      const auto index = table.get<std::uint8_t>(row, field);
      return index < column.categories.size() ? column.categories[index] : std::string("?");
    }
    case ParamColumn::Kind::Text: {
      // Mixed-type choices are stored as text; the domain says what type each value had.
      const std::string text = table.get_string(row, field);
      for (const auto& v : column.values)
        if (core::to_text(v) == text) return v;
      return text;
    }
  }
  return std::string("?");
}

void put_loop_figures(const StudyLayout& layout, std::byte* commit_row,
                      const core::LoopFigures& figures) {
  const auto& l = layout.commit;
  const auto& k = layout.k;
  l.put_f64(commit_row, k.loop_recent_ms, figures.recent_longest_ms);
  l.put_enum(commit_row, k.loop_recent_work, static_cast<std::uint8_t>(figures.recent_work));
  l.put_f64(commit_row, k.loop_recent_busy, figures.recent_busy);
  l.put_f64(commit_row, k.loop_longest_ms, figures.longest_ms);
  l.put_enum(commit_row, k.loop_longest_work, static_cast<std::uint8_t>(figures.longest_work));
  l.put_u64(commit_row, k.loop_turns, figures.turns);
  l.put_u64(commit_row, k.loop_over_10ms, figures.over_10ms);
  l.put_u64(commit_row, k.loop_over_100ms, figures.over_100ms);
  l.put_u64(commit_row, k.loop_over_1s, figures.over_1s);
}

core::LoopFigures get_loop_figures(const StudyLayout& layout, const std::byte* commit_row) {
  const auto& l = layout.commit;
  const auto& k = layout.k;
  const auto work = [&](std::size_t field) {
    const auto code = l.get<std::uint8_t>(commit_row, field);
    return code < core::kLoopWorkKinds ? static_cast<core::LoopWork>(code)
                                       : core::LoopWork::Periodic;
  };
  return core::LoopFigures{l.get<double>(commit_row, k.loop_recent_ms),
                           work(k.loop_recent_work),
                           l.get<double>(commit_row, k.loop_recent_busy),
                           l.get<double>(commit_row, k.loop_longest_ms),
                           work(k.loop_longest_work),
                           l.get<std::uint64_t>(commit_row, k.loop_turns),
                           l.get<std::uint64_t>(commit_row, k.loop_over_10ms),
                           l.get<std::uint64_t>(commit_row, k.loop_over_100ms),
                           l.get<std::uint64_t>(commit_row, k.loop_over_1s)};
}

}  // namespace slurmtune::store
