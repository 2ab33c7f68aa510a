#include "core/replay/replay.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <istream>
#include <ostream>
#include <sstream>
#include <unordered_set>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/replay/replay_event.hpp"
#include "core/space/param_value.hpp"
#include "core/steps.hpp"

namespace slurmtune::core {
namespace {

double number_field(const ReplayEvent& event, std::string_view key, bool required,
                    double fallback = 0) {
  const EventValue* v = event.field(key);
  if (!v) {
    if (required) throw InputError("missing field \"" + std::string(key) + "\"");
    return fallback;
  }
  if (v->kind != EventKind::Number)
    throw InputError("field \"" + std::string(key) + "\" must be a number, not " +
                     std::string(to_string(v->kind)));
  return v->number;
}

// A report's value of every metric column: "value" the first, "metrics" the others by
// name (NaN where absent).
std::vector<double> metric_row(const ReplaySampler& sampler, const ReplayEvent& event) {
  const auto& columns = sampler.metric_columns;
  std::vector<double> row(std::max<std::size_t>(columns.size(), 1), NAN);
  row[0] = number_field(event, "value", true);
  const EventValue* metrics = event.field("metrics");
  if (!metrics) return row;
  if (metrics->kind != EventKind::Object)
    throw InputError("field \"metrics\" must be an object, not " +
                     std::string(to_string(metrics->kind)));
  for (const auto& m : metrics->members) {
    const auto column = std::find(columns.begin(), columns.end(), m.name);
    if (column == columns.end())
      throw InputError("field \"metrics\": '" + m.name +
                       "' is not a metric of the study ([study] metric and metrics)");
    const auto number = m.kind == EventKind::Number ? parse_double(m.text) : std::nullopt;
    if (!number)
      throw InputError("field \"metrics\": '" + m.name + "' must be a number, not " +
                       std::string(to_string(m.kind)));
    row[static_cast<std::size_t>(column - columns.begin())] = *number;
  }
  return row;
}

// A step of a report, an end or a checkpoint (core/steps.hpp).
double step_field(const ReplayEvent& event) {
  const double step = number_field(event, "step", true);
  if (!valid_step(step)) throw InputError("field \"step\" " + step_range_refusal(step));
  return step;
}

// A start's, resumption's or report's recorded time, from which the sampler learns step
// costs; nullopt when the line has none.
std::optional<double> time_field(const ReplayEvent& event) {
  if (!event.field("time")) return std::nullopt;
  const double time = number_field(event, "time", true);
  if (!std::isfinite(time))
    throw InputError("field \"time\" must be a finite number of seconds, not " + json_number(time));
  return time;
}

// A start's forced bracket: a whole number an int holds (a cast of anything else to int
// is undefined).
int bracket_field(const ReplayEvent& event) {
  const double b = number_field(event, "bracket", true);
  if (!(b >= 0 && b <= 1e6) || b != std::floor(b))
    throw InputError("field \"bracket\" must be a whole number from 0 to 1000000, not " +
                     json_number(b));
  return static_cast<int>(b);
}

// Which trials a log has started and ended so far: a second start, and an event of a
// trial never started or already ended, are refused with the trial named.
class TrialLedger {
 public:
  void start(TrialId trial) {
    if (!started_.insert(trial).second)
      throw InputError("trial " + std::to_string(trial) + " starts a second time");
  }
  /// `did`: "reported", "ended", ... as the refusal says it.
  void running(TrialId trial, std::string_view did) const {
    if (!started_.count(trial))
      throw InputError("trial " + std::to_string(trial) + " " + std::string(did) +
                       " before it was started");
    if (ended_.count(trial))
      throw InputError("trial " + std::to_string(trial) + " " + std::string(did) +
                       " after it ended");
  }
  void end(TrialId trial) { ended_.insert(trial); }
  void reopen(TrialId trial) {
    if (!ended_.erase(trial))
      throw InputError("trial " + std::to_string(trial) + " reopens but has not ended");
  }

 private:
  std::unordered_set<TrialId> started_, ended_;
};

TrialId trial_field(const ReplayEvent& object) {
  const double t = number_field(object, "trial", true);
  if (!(t >= 0) || t != std::floor(t) || t > 9007199254740992.0)
    throw InputError("field \"trial\" must be a non-negative integer");
  return static_cast<TrialId>(t);
}

// Decision lines are built by appending to one string, numbers by std::to_chars: an
// std::ostringstream per line (its locale and facets) cost more than the decision itself
// (doc/performance/control-plane.md#json-readers-issue-27-4-choose-a-library-by-measurement).
void append_whole(std::string& out, std::uint64_t value) {
  char buffer[24];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, end);
}

void append_field(std::string& out, std::string_view name, double value) {
  out += ",\"";
  out += name;
  out += "\":";
  out += json_number(value);
}

std::string exploit_fields(const Exploit& e, const SearchSpace* space) {
  std::string text = "\"donor\":";
  append_whole(text, e.donor);
  append_field(text, "donor_step", e.donor_step);
  if (space) {
    text += ",\"config\":";
    text += space->to_json(e.config);
  }
  text += ",\"operations\":";
  text += json_quote(e.operations);
  return text;
}

void append_prediction(std::string& line, std::string_view name, const PredictedFinal& p) {
  line += ",\"";
  line += name;
  line += "\":{\"at\":";
  line += json_number(p.at);
  append_field(line, "mean", p.mean);
  append_field(line, "lower", p.lower);
  append_field(line, "upper", p.upper);
  line += '}';
}

// freeze_thaw's reason for a resumption: the rule, the rung, and for the model's choice
// what it expected there and the expected improvement per unit of resource it compared.
std::string resume_line(TrialId trial, const ResumeReason& why) {
  std::string line = "{\"trial\":";
  append_whole(line, trial);
  line += ",\"resumed\":{\"rule\":\"";
  line += to_string(why.rule);
  line += '"';
  append_field(line, "until", why.until);
  if (why.expected) append_prediction(line, "expected", *why.expected);
  if (why.rule == ResumeReason::Rule::Model) {
    append_field(line, "improvement", why.improvement);
    append_field(line, "start_improvement", why.start_improvement);
  }
  line += "}}";
  return line;
}

std::string report_line(TrialId trial, double step, const ReportOutcome& o,
                        const SearchSpace* space) {
  std::string line = "{\"trial\":";
  line.reserve(128);
  append_whole(line, trial);
  append_field(line, "step", step);
  line += ",\"decision\":\"";
  line += to_string(o.decision);
  line += '"';
  if (o.rung) {
    line += ",\"rung\":";
    line += std::to_string(*o.rung);
  }
  if (o.milestone) append_field(line, "milestone", *o.milestone);
  if (o.cutoff) append_field(line, "cutoff", *o.cutoff);
  if (o.standing) {  // MO-ASHA: where it came in its rung, and how many go on
    line += ",\"position\":" + std::to_string(o.standing->position);
    line += ",\"of\":" + std::to_string(o.standing->judged);
    line += ",\"kept\":" + std::to_string(o.standing->kept);
  }
  if (o.checkpoint) line += ",\"checkpoint\":true";
  if (o.prediction) append_prediction(line, "predicted", *o.prediction);
  if (o.exploit) {
    line += ',';
    line += exploit_fields(*o.exploit, space);
  }
  line += '}';
  return line;
}

// A start's "config" object as a configuration of `space`: every parameter that exists
// in it (a conditional one only while its condition holds), and no other.
Configuration recorded_config(const EventValue& value, const SearchSpace& space) {
  if (value.kind != EventKind::Object) throw InputError("field \"config\" must be an object");
  for (const auto& member : value.members)
    if (!space.index_of(member.name))
      throw InputError("config names \"" + member.name +
                       "\", which is not a parameter of [search]");
  Configuration config;
  std::vector<bool> active;
  for (std::size_t p = 0; p < space.size(); ++p) {
    const Parameter& param = space.parameters()[p];
    // The last of duplicate names counts, as in Python's json.
    const ConfigMember* v = nullptr;
    for (const auto& member : value.members)
      if (member.name == param.name) v = &member;
    active.push_back(space.is_active(p, config.values, active));
    if (!active.back()) {
      if (v)
        throw InputError("config gives \"" + param.name +
                         "\", which does not exist in this configuration (its when does not hold)");
      config.values.push_back(placeholder(param.domain));
      continue;
    }
    if (!v) throw InputError("config lacks parameter \"" + param.name + "\"");
    const bool readable =
        v->kind == EventKind::Number || v->kind == EventKind::String || v->kind == EventKind::Bool;
    const std::string& text = v->text;
    const auto parsed = !readable || text.empty() ? std::nullopt : param.domain.parse(text);
    if (!parsed || !param.domain.admits(*parsed))
      throw InputError(
          "config \"" + param.name + "\": " +
          (!readable || text.empty() ? std::string(to_string(v->kind)) : json_quote(text)) +
          " is not a value of " + param.domain.describe());
    config.values.push_back(*parsed);
  }
  space.resolve_activity(config);
  return config;
}

// The sampler's suggestion for a starting trial, compared with what ran when the event
// says; the sampler then learns from what ran.
Configuration suggest(ReplaySampler& sampler, TrialId trial, const EventValue* config,
                      std::ostream& out) {
  if (sampler.model_based && trial != sampler.next_trial)
    throw InputError("trial " + std::to_string(trial) + " starts where trial " +
                     std::to_string(sampler.next_trial) +
                     " is next: " + "a model-based sampler suggests trials in id order");
  ++sampler.next_trial;
  Suggestion suggested = sampler.suggester.suggest(trial);
  if (!config) return std::move(suggested.config);
  Configuration ran = recorded_config(*config, sampler.space);
  std::string differs;
  for (std::size_t p = 0; p < ran.values.size(); ++p)
    if (!(ran.values[p] == suggested.config.values[p]) ||
        ran.is_active(p) != suggested.config.is_active(p)) {
      if (!differs.empty()) differs.push_back(',');
      differs.append(json_quote(sampler.space.parameters()[p].name));
    }
  out << "{\"trial\":" << trial << ",\"origin\":\"" << to_string(suggested.info.origin)
      << "\",\"suggested\":" << sampler.space.to_json(suggested.config)
      << ",\"matches\":" << (differs.empty() ? "true" : "false");
  if (!differs.empty()) out << ",\"differs\":[" << differs << "]";
  out << "}\n";
  sampler.suggester.started(trial, ran);
  return ran;
}

// Applies one event; returns true when it was a report (and writes its decision).
bool apply(Scheduler& scheduler, ReplaySampler* sampler, TrialLedger& ledger,
           const ReplayEvent& event, std::ostream& out) {
  const EventValue* type = event.field("type");
  if (!type || type->kind != EventKind::String) throw InputError("missing string field \"type\"");
  const std::string_view kind = type->text;
  if (kind == "close") {
    scheduler.close_admissions();
    return false;
  }
  if (kind == "session") {  // a later session of the study began (export writes it)
    if (sampler) sampler->suggester.session_began();
    return false;
  }
  const TrialId trial = trial_field(event);
  if (kind == "start") {
    std::optional<int> bracket;
    if (event.field("bracket")) bracket = bracket_field(event);
    ledger.start(trial);
    scheduler.add_trial(trial, bracket);
    const EventValue* config = event.field("config");
    if (sampler && (sampler->model_based || config))
      scheduler.trial_configured(trial, suggest(*sampler, trial, config, out));
    if (const auto time = time_field(event); sampler && time)
      sampler->suggester.began_at(trial, 0, *time);
    return false;
  }
  if (kind == "report") {
    ledger.running(trial, "reported");
    const double step = step_field(event);
    const double value = number_field(event, "value", true);
    if (sampler) {
      if (const auto time = time_field(event)) sampler->suggester.reported_at(trial, step, *time);
      sampler->last_step[trial] = step;
      const auto row = metric_row(*sampler, event);
      sampler->suggester.reported_metrics(trial, step, row);
      scheduler.reported_metrics(trial, step, row);
    }
    const ReportOutcome outcome = scheduler.report(trial, step, value);
    if (sampler) sampler->suggester.reported(trial, step, value, outcome);
    out << report_line(trial, step, outcome, sampler ? &sampler->space : nullptr) << '\n';
    scheduler.take_exploits();  // each is in its report's line (the reporter's) or its resume's
    return true;
  }
  if (kind == "end") {
    const EventValue* state = event.field("state");
    if (!state || state->kind != EventKind::String)
      throw InputError("missing string field \"state\"");
    const auto end = trial_end_from_string(state->text);
    if (!end) throw InputError("field \"state\" must be \"completed\", \"stopped\" or \"failed\"");
    ledger.running(trial, "ended");
    std::optional<Observation> last;
    if (event.field("step") || event.field("value"))
      last = Observation{step_field(event), number_field(event, "value", true)};
    ledger.end(trial);
    scheduler.end_trial(trial, *end, last);
    scheduler.take_exploits();  // synchronous PBT: shown when the trials resume
    if (sampler) sampler->suggester.ended(trial, *end);
    return false;
  }
  if (kind == "reopen") {  // dropped when the study ended, it waits at its rung again
    ledger.reopen(trial);
    if (!scheduler.reopen(trial))
      throw InputError("the scheduler cannot reopen trial " + std::to_string(trial) +
                       " (it did not end while paused)");
    return false;
  }
  if (kind == "checkpoint") {  // a checkpoint the scheduler asked for was saved
    ledger.running(trial, "saved a checkpoint");
    // No step (older logs: NaN): the checkpoint a resumed study awaited will never come.
    const bool never_came = !event.field("step") || std::isnan(number_field(event, "step", true));
    scheduler.checkpoint_saved(trial, never_came ? NAN : step_field(event));
    return false;
  }
  if (kind == "resume") {
    ledger.running(trial, "resumed");
    // The original run got this resumption from next_job(); asking again moves the
    // scheduler's promotion queue as it moved then.
    const auto job = scheduler.next_job(false);
    if (!job || job->kind != Job::Kind::Resume || job->trial != trial)
      throw InputError("the scheduler would not resume trial " + std::to_string(trial) + " here");
    if (sampler) {
      sampler->suggester.resumed(trial);
      if (const auto time = time_field(event)) {
        const auto last = sampler->last_step.find(trial);
        sampler->suggester.began_at(trial, last == sampler->last_step.end() ? 0 : last->second,
                                    *time);
      }
    }
    if (job->exploit)
      out << "{\"trial\":" << trial << ",\"resume\":{"
          << exploit_fields(*job->exploit, sampler ? &sampler->space : nullptr) << "}}\n";
    if (job->reason) out << resume_line(trial, *job->reason) << '\n';
    return false;
  }
  throw InputError(
      "unknown event type \"" + std::string(kind) +
      "\" (expected start, report, checkpoint, resume, close, session, end or reopen)");
}

}  // namespace

std::string json_number(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e15)
    return std::to_string(static_cast<std::int64_t>(value));
  return format_double(value);
}

std::size_t replay_events(Scheduler& scheduler, std::istream& in, std::ostream& out,
                          const std::string& source, ReplaySampler* sampler) {
  std::string line;
  std::size_t number = 0;
  std::size_t reports = 0;
  ReplayEventReader reader;
  TrialLedger ledger;
  while (std::getline(in, line)) {
    ++number;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    try {
      if (apply(scheduler, sampler, ledger, reader.read(line), out)) ++reports;
    } catch (const InputError& e) {
      throw InputError(source + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  return reports;
}

}  // namespace slurmtune::core
