// `slurmtune status`: a study at a glance, in the spirit of Ray Tune's status table.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "cli/options.hpp"
#include "cli/results/damaged_file_guard.hpp"
#include "cli/results/study_tables.hpp"
#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/replay/replay.hpp"
#include "core/space/param_value.hpp"
#include "core/study/failure_text.hpp"
#include "core/text.hpp"
#include "runtime/recording/study_lock.hpp"
#include "runtime/study_paths.hpp"
#include "store/objective_values.hpp"
#include "store/study_reader.hpp"

namespace slurmtune::cli {
namespace {

std::string short_number(double v) {
  if (std::isnan(v)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

std::string rtrim(std::string text) {
  text.erase(text.find_last_not_of(' ') + 1);
  return text;
}

// Characters, not bytes: a UTF-8 name of a parameter or resource takes one column per
// character (continuation bytes take none).
std::size_t columns(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
  }));
}

// `text` filled to `width` columns; one space after a text that fills them, so that a
// long value or name never runs into the next column (headers read `iterationslast`).
std::string pad(std::string text, std::size_t width) {
  const std::size_t used = columns(text);
  text.append(used < width ? width - used : 1, ' ');
  return text;
}

struct RungCount {
  std::uint64_t judged = 0, stopped = 0, paused = 0, completed = 0;
};

// What status shows of /events, gathered in one pass over it in chunks: its memory grows
// with rungs and trials, not with events.
struct EventDigest {
  std::map<std::pair<int, double>, RungCount> rungs;
  std::map<std::uint64_t, store::EventRecord> latest_prediction;  ///< per trial
  std::uint64_t resumed = 0, resumed_by_model = 0;
  std::deque<store::EventRecord> latest_resumes;  ///< at most the `limit` last
};

EventDigest digest_events(const store::StudyReader& reader, std::size_t limit) {
  EventDigest digest;
  const double max_t = reader.spec().scheduler.max_t;
  reader.for_each_event([&](const store::EventRecord& e) {
    if (e.rung >= 0) {
      auto& r = digest.rungs[{e.rung, e.milestone}];
      ++r.judged;
      // A stop at max_t is the end of the trial's course, not an early stop.
      const bool at_end = e.milestone >= max_t;
      r.stopped += e.kind == store::EventKind::Stop && !at_end;
      r.completed += e.kind == store::EventKind::Stop && at_end;
      r.paused += e.kind == store::EventKind::Pause;
    }
    if (e.prediction && e.kind != store::EventKind::Resume)
      digest.latest_prediction.insert_or_assign(e.trial, e);
    if (e.kind == store::EventKind::Resume) {
      ++digest.resumed;
      digest.resumed_by_model += !std::isnan(e.value);
      digest.latest_resumes.push_back(e);
      if (digest.latest_resumes.size() > limit) digest.latest_resumes.pop_front();
    }
  });
  return digest;
}

void print_rungs(std::ostream& out, const store::StudyReader& reader, const EventDigest& digest) {
  const auto& rungs = digest.rungs;
  if (rungs.empty()) return;
  out << "Rung occupancy (" << reader.spec().scheduler.resource << "):\n";
  for (const auto& [key, r] : rungs)
    out << "  rung " << key.first << " @ " << core::json_number(key.second) << ": " << r.judged
        << " judged, " << r.stopped << " stopped, " << r.paused << " paused"
        << (r.completed ? ", " + std::to_string(r.completed) + " completed" : std::string())
        << '\n';
}

// Learning-curve predictions (asha_promotion, predict = true): each trial's latest one,
// the most promising first.
void print_predictions(std::ostream& out, const store::StudyReader& reader,
                       const EventDigest& digest, std::size_t limit) {
  const auto& latest = digest.latest_prediction;
  if (latest.empty()) return;
  std::vector<const store::EventRecord*> ranked;
  for (const auto& [trial, e] : latest)
    ranked.push_back(&e);
  const bool min = reader.spec().mode == core::Mode::Min;
  std::stable_sort(ranked.begin(), ranked.end(), [&](const auto* a, const auto* b) {
    return min ? a->prediction->mean < b->prediction->mean
               : a->prediction->mean > b->prediction->mean;
  });
  const auto& resource = reader.spec().scheduler.resource;
  const std::size_t shown = std::min(limit, ranked.size());
  out << "Predicted " << reader.spec().metric << " (" << shown << " of " << ranked.size()
      << " trials, latest prediction each, most promising first):\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& e = *ranked[i];
    out << "  trial " << e.trial << ": predicted " << short_number(e.prediction->mean) << " ["
        << short_number(e.prediction->lower) << ", " << short_number(e.prediction->upper) << "] at "
        << resource << ' ' << short_number(e.prediction->at) << " (made at " << resource << ' '
        << short_number(e.step) << ": " << store::event_kind_name(e.kind) << ")\n";
  }
}

// freeze_thaw: how many resumptions the model chose and how many the promotion rule, and
// the latest ones with what the model expected (study_writer.hpp: trial_resumed).
void print_resumptions(std::ostream& out, const store::StudyReader& reader,
                       const EventDigest& digest) {
  if (reader.spec().scheduler.type != core::SchedulerType::FreezeThaw) return;
  const auto& resource = reader.spec().scheduler.resource;
  out << "Resumptions: " << digest.resumed << ", " << digest.resumed_by_model
      << " chosen by the model (expected improvement per " << resource << " above a new "
      << "configuration's), " << digest.resumed - digest.resumed_by_model
      << " by the promotion rule";
  if (digest.latest_resumes.empty()) {
    out << '\n';
    return;
  }
  out << "; the latest " << digest.latest_resumes.size() << ":\n";
  for (const auto& e : digest.latest_resumes) {
    out << "  trial " << e.trial << " at " << resource << ' ' << short_number(e.step) << " for "
        << short_number(e.milestone) << ": ";
    if (std::isnan(e.value)) {
      out << "promotion rule\n";
      continue;
    }
    out << "model";
    if (e.prediction)
      out << " expected " << short_number(e.prediction->mean) << " ["
          << short_number(e.prediction->lower) << ", " << short_number(e.prediction->upper) << "]";
    out << ", improvement per " << resource << ' ' << short_number(e.value) << " against "
        << short_number(e.cutoff) << " for a new configuration\n";
  }
}

std::string objectives_text(const core::StudySpec& spec) {
  std::string text = spec.multi_objective() ? "Objectives " : "Metric ";
  for (std::size_t k = 0; k < spec.objectives.size(); ++k)
    text += (k ? ", " : "") + spec.objectives[k].metric +
            (spec.objectives[k].mode == core::Mode::Min ? " (min)" : " (max)");
  return text;
}

// Constraints: what they are and how many finished trials break one (shown apart).
void print_constraints(std::ostream& out, const core::StudySpec& spec,
                       const std::vector<store::TrialRecord>& trials,
                       const std::vector<store::TrialStanding>& standings) {
  if (spec.constraints.empty()) return;
  std::size_t finished = 0, infeasible = 0;
  for (const auto& t : trials) {
    if (t.status != store::TrialStatus::Completed && t.status != store::TrialStatus::Stopped)
      continue;
    ++finished;
    infeasible += !standings[t.id].feasible;
  }
  out << "Constraints";
  for (const auto& c : spec.constraints)
    out << ' ' << c.text() << (&c == &spec.constraints.back() ? "" : ",");
  out << ": " << infeasible << " of " << finished << " finished trials infeasible ("
      << (spec.multi_objective() ? "never on the front" : "never best") << ")\n";
}

void print_front(std::ostream& out, const core::StudySpec& spec,
                 const std::vector<store::TrialRecord>& trials,
                 const std::vector<store::TrialStanding>& standings,
                 const std::vector<std::uint64_t>& front) {
  out << "Pareto front: " << front.size() << " trial(s)" << (front.empty() ? "" : ":") << '\n';
  for (const auto id : front) {
    out << "  trial " << id << ":";
    for (std::size_t k = 0; k < spec.objectives.size(); ++k)
      out << (k ? ", " : " ") << spec.objectives[k].metric << " = "
          << short_number(standings[id].objectives[k]);
    out << "\n    " << spec.space.to_json(trials[id].config) << '\n';
  }
}

// Per trial: "front" on the Pareto front, "infeasible" when a constraint fails (empty
// for a study of one objective without constraints).
std::vector<std::string> notes(const core::StudySpec& spec,
                               const std::vector<store::TrialRecord>& trials,
                               const std::vector<store::TrialStanding>& standings,
                               const std::vector<std::uint64_t>& front) {
  if (!spec.multi_objective() && spec.constraints.empty()) return {};
  std::vector<std::string> out(trials.size());
  for (std::size_t t = 0; t < trials.size(); ++t)
    if (!standings[t].feasible && trials[t].status != store::TrialStatus::Running &&
        trials[t].status != store::TrialStatus::Pending)
      out[t] = "infeasible";
  if (spec.multi_objective())
    for (const auto id : front)
      out[id] = "front";
  return out;
}

void print_trials(std::ostream& out, const store::StudyReader& reader,
                  const std::vector<store::TrialRecord>& trials, std::size_t limit,
                  const std::vector<std::string>& notes) {
  const auto& spec = reader.spec();
  std::vector<const store::TrialRecord*> order;
  for (const auto& t : trials)
    order.push_back(&t);
  // Running trials first, then by best value: what a user watching a study wants.
  const bool minimise = spec.mode == core::Mode::Min;
  std::stable_sort(order.begin(), order.end(), [minimise](const auto* a, const auto* b) {
    const bool ra = a->status == store::TrialStatus::Running,
               rb = b->status == store::TrialStatus::Running;
    if (ra != rb) return ra;
    if (std::isnan(a->best_value) != std::isnan(b->best_value)) return std::isnan(b->best_value);
    return minimise ? a->best_value < b->best_value : a->best_value > b->best_value;
  });
  const std::size_t shown = std::min(limit, order.size());
  out << "Trials (" << shown << " of " << trials.size()
      << (shown < trials.size() ? ", running first then best; --all shows every trial" : "")
      << "):\n";
  std::string header = pad("trial", 8) + pad("status", 11) + pad(spec.scheduler.resource, 9) +
                       pad("last", 12) + pad("best", 12);
  if (!notes.empty()) header += pad("note", 11);
  for (const auto& p : spec.space.parameters())
    header += pad(p.name, 14);
  out << "  " << rtrim(header) << '\n';
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& t = *order[i];
    std::string line =
        pad(std::to_string(t.id), 8) +
        pad(enum_name(store::trial_status_names(), static_cast<std::size_t>(t.status)), 11) +
        pad(short_number(t.last_step), 9) + pad(short_number(t.last_value), 12) +
        pad(short_number(t.best_value), 12);
    if (!notes.empty()) line += pad(t.id < notes.size() ? notes[t.id] : "", 11);
    for (std::size_t p = 0; p < t.config.values.size(); ++p) {
      if (!t.config.is_active(p)) {  // a conditional parameter this trial does not have
        line += pad("-", 14);
        continue;
      }
      const Cell c = param_cell(t.config.values[p]);
      line += pad(
          std::holds_alternative<double>(c) ? short_number(std::get<double>(c)) : cell_text(c), 14);
    }
    out << "  " << rtrim(line) << '\n';
  }
}

// Failed trials with the cause: the first line of each one's error (the exit status) and
// the last line of its stderr, where Python prints the exception.
void print_failures(std::ostream& out, const std::vector<store::TrialRecord>& trials,
                    std::size_t limit) {
  std::vector<const store::TrialRecord*> failed;
  for (const auto& t : trials)
    if (t.status == store::TrialStatus::Failed) failed.push_back(&t);
  if (failed.empty()) return;
  const std::size_t shown = std::min(limit, failed.size());
  out << "Failures (" << shown << " of " << failed.size()
      << "; each trial's whole stderr is in STUDY.trials/trial-ID/stderr.log):\n";
  for (std::size_t i = 0; i < shown; ++i)
    out << "  trial " << failed[i]->id << ": "
        << core::visible(core::failure_summary(failed[i]->error)) << '\n';
}

// Where a model-based sampler's configurations came from: how far the model took over;
// and, for any sampler, how many trials ran an [[enqueue]] entry.
// The coordinator's loop (issue #62): every trial waits for its decision on it, so a
// loop that is busy most of the time, or turns of 100 ms and more, say the centre is the
// bottleneck. The figures of the last commit: of the last minute, and of the session.
void print_loop(std::ostream& out, const store::CommittedCounts& committed) {
  if (!committed.loop || committed.loop->turns == 0) return;  // a simulation, an older file
  const core::LoopFigures& loop = *committed.loop;
  const auto& work = core::loop_work_names();
  const auto ms = [](double v) { return core::format_double(std::round(v * 10) / 10) + " ms"; };
  out << "Coordinator loop: longest turn of the last minute " << ms(loop.recent_longest_ms) << " ("
      << work[static_cast<std::size_t>(loop.recent_work)] << "), busy "
      << core::format_double(std::round(loop.recent_busy * 1000) / 10) << " %; of the session "
      << ms(loop.longest_ms) << " (" << work[static_cast<std::size_t>(loop.longest_work)]
      << "), turns over 100 ms " << loop.over_100ms << ", over 1 s " << loop.over_1s << " (of "
      << loop.turns << ")\n";
}

void print_origins(std::ostream& out, const core::StudySpec& spec,
                   const std::vector<store::TrialRecord>& trials) {
  if (!core::is_model_based(spec.sampler.kind) && spec.sampler.enqueued.empty()) return;
  std::array<std::uint64_t, 5> counts{};
  for (const auto& t : trials)
    ++counts[static_cast<std::size_t>(t.suggestion.origin) % counts.size()];
  out << "Configurations:";
  const char* separator = " ";
  using core::SuggestionOrigin;
  for (const auto origin :
       {SuggestionOrigin::Enqueued, SuggestionOrigin::Blind, SuggestionOrigin::Startup,
        SuggestionOrigin::Random, SuggestionOrigin::Model}) {
    const auto o = static_cast<std::size_t>(origin);
    if (counts[o] == 0) continue;
    out << separator << counts[o] << ' ' << store::suggestion_origin_names()[o];
    separator = ", ";
  }
  out << '\n';
}

// Reports only the write-ahead log holds (the last flush interval's of a running
// coordinator, or what a killed one never put into the file): how many, and who puts them
// in, as the study's lock tells.
void print_write_ahead(std::ostream& out, const std::string& path, std::uint64_t file_rows) {
  std::optional<std::uint64_t> logged;
  try {
    logged = store::logged_metric_rows(path);
  } catch (const InputError& e) {
    out << "Write-ahead log: not read (" << e.what() << ")\n";
    return;
  }
  if (!logged || *logged <= file_rows) return;
  out << "Write-ahead log: " << *logged - file_rows << " more report(s) than this file shows ("
      << store::write_ahead_log_path(path) << "); ";
  const auto holder = runtime::StudyLock::holder_of(runtime::lock_file_of(path));
  const std::string stale =
      holder ? runtime::StudyLock::why_stale(*holder, runtime::StudyLock::this_process()) : "";
  if (holder && stale.empty())
    out << "the run that holds the study, " << runtime::StudyLock::who(*holder)
        << ", puts them in at its next commit\n";
  else
    out << "the run that wrote them has ended"
        << (stale.empty() ? std::string() : " (the study's lock: " + stale + ")")
        << ": `slurmtune recover " << path << "` (or a resume) puts them in\n";
}

void print_status(std::ostream& out, const std::string& path, std::size_t limit,
                  bool include_failed) {
  DamagedFileGuard guard(path);
  const store::StudyReader reader(path);
  guard.opened();
  const auto& spec = reader.spec();
  const auto trials = reader.trials();
  std::array<std::uint64_t, 6> counts{};
  std::uint64_t unknown = 0;  // a status code this version does not know: counted, not lost
  for (const auto& t : trials) {
    if (static_cast<std::size_t>(t.status) < counts.size())
      ++counts[static_cast<std::size_t>(t.status)];
    else
      ++unknown;
  }
  out << "== Status: " << spec.name << " ==\n"
      << "File " << path << " (schema " << reader.schema_version() << ", slurmtune "
      << core::visible(reader.attribute("slurmtune_version")) << ", created "
      << core::visible(reader.attribute("created")) << " on "
      << core::visible(reader.attribute("host")) << ")\n"
      << objectives_text(spec) << ", scheduler " << core::scheduler_keyword(spec.scheduler.type)
      << ", sampler " << core::sampler_keyword(spec.sampler.kind) << ", " << reader.metric_rows()
      << " reports\n";
  print_write_ahead(out, path, reader.metric_rows());
  out << "Trials " << trials.size() << ":";
  for (std::size_t s = 0; s < counts.size(); ++s)
    out << ' ' << store::trial_status_names()[s] << ' ' << counts[s]
        << (s + 1 < counts.size() ? "," : "");
  if (unknown) out << ", of an unknown status " << unknown;
  out << '\n';
  print_origins(out, spec, trials);
  print_loop(out, reader.committed());
  if (spec.scheduler.type == core::SchedulerType::Pbt)
    out << "Exploits " << reader.committed().exploits << " (configurations changed mid-run)\n";
  if (const auto removed = reader.committed().removed_checkpoints)
    out << "Checkpoints removed " << removed
        << " ([checkpoints]; /removed_checkpoints says which)\n";
  const auto standings = store::trial_standings(reader, trials);
  const auto front = store::pareto_front(spec, trials, standings);
  print_constraints(out, spec, trials, standings);
  if (spec.multi_objective()) {
    print_front(out, spec, trials, standings, front);
  } else if (const auto candidates = best_candidates(trials, standings, include_failed);
             const auto* best = best_trial(candidates, spec.mode)) {
    out << "Best " << (spec.constraints.empty() ? "" : "feasible ") << "trial " << best->id << ": "
        << spec.metric << " = " << short_number(best->best_value) << " at "
        << spec.scheduler.resource << " " << short_number(best->best_step) << "\n  "
        << spec.space.to_json(reader.config_at_best(*best)) << '\n';
  }
  const EventDigest digest = digest_events(reader, limit);
  print_rungs(out, reader, digest);
  print_predictions(out, reader, digest, limit);
  print_resumptions(out, reader, digest);
  print_trials(out, reader, trials, limit, notes(spec, trials, standings, front));
  print_failures(out, trials, std::min<std::size_t>(limit, 10));
}

}  // namespace

int status_command(const Args& args) {
  po::options_description options("status options");
  options.add_options()("study-file", po::value<std::string>()->required(), "results file (HDF5)")(
      "watch,w", po::value<double>()->implicit_value(2.0),
      "redraw every SECONDS (default 2) until interrupted")(
      "all,a", "list every trial (default: the first 20)")("iterations", po::value<std::size_t>(),
                                                           "with --watch: stop after N redraws")(
      "include-failed", "a trial that failed may be named best (by default it never is)");
  po::positional_options_description positional;
  positional.add("study-file", 1);
  po::variables_map vm;
  if (!parse_options(args, "slurmtune status STUDY.h5 [--watch [SECONDS]] [--all]", options,
                     positional, vm))
    return kSuccess;
  const auto path = vm["study-file"].as<std::string>();
  const std::size_t limit = vm.count("all") ? SIZE_MAX : 20;
  const bool include_failed = vm.count("include-failed") > 0;
  if (!vm.count("watch")) {
    print_status(std::cout, path, limit, include_failed);
    return kSuccess;
  }
  const auto period = std::chrono::duration<double>(vm["watch"].as<double>());
  const std::size_t iterations =
      vm.count("iterations") ? vm["iterations"].as<std::size_t>() : SIZE_MAX;
  for (std::size_t i = 0; i < iterations; ++i) {
    std::ostringstream frame;  // drawn in one write, so the terminal never shows half a frame
    print_status(frame, path, limit, include_failed);
    std::cout << "\x1b[H\x1b[2J" << frame.str() << std::flush;
    if (i + 1 < iterations) std::this_thread::sleep_for(period);
  }
  return kSuccess;
}

}  // namespace slurmtune::cli
