#include <iostream>

#include "cli/options.hpp"
#include "cli/results/damaged_file_guard.hpp"
#include "cli/results/quoting.hpp"
#include "cli/results/study_tables.hpp"
#include "config/toml_quoting.hpp"
#include "core/number_text.hpp"
#include "core/replay/replay.hpp"
#include "core/space/param_value.hpp"
#include "core/study/trial_command.hpp"
#include "core/text.hpp"
#include "runtime/study_paths.hpp"
#include "store/objective_values.hpp"

namespace slurmtune::cli {

namespace {

// One shell word per flag: `eval "set -- $(slurmtune best s.h5 -f flags)"` or
// `python3 train.py $(...)` only when no value needs quoting.
std::string flags_of(const core::StudySpec& spec, const core::Configuration& config) {
  const auto& params = spec.space.parameters();
  std::string out;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!config.is_active(i)) continue;  // the trial has no such parameter
    if (!out.empty()) out += ' ';
    out += shell_word("--" + params[i].name + "=" + core::to_text(config.values[i]));
  }
  return out;
}

// The study's own [trial] command with the configuration in it, one shell word per
// argument: what retrains the configuration by hand (`{trial_dir}` is the trial's folder).
std::string command_of(const store::StudyReader& reader, const core::Configuration& config,
                       std::uint64_t trial) {
  const auto& spec = reader.spec();
  if (spec.trial.command.empty())
    throw InputError(reader.path() + ": the study records no [trial] command; use --format flags");
  const std::string dir = runtime::trial_dir_in(runtime::trials_dir_of(reader.path()), trial);
  std::string out;
  for (const auto& word :
       core::expand_command(spec.trial.command, spec.space, config, trial, dir)) {
    if (!out.empty()) out += ' ';
    out += shell_word(word);
  }
  return out;
}

// Several objectives: every trial of the Pareto front, by id; one JSON object or one
// line of flags per trial, or a TOML [[trial]] table each.
void print_pareto_front(const store::StudyReader& reader,
                        const std::vector<store::TrialRecord>& trials,
                        const std::vector<store::TrialStanding>& standings,
                        const std::string& format) {
  const auto& spec = reader.spec();
  const auto front = store::pareto_front(spec, trials, standings);
  if (front.empty())
    throw InputError(reader.path() + ": no " + (spec.constraints.empty() ? "" : "feasible ") +
                     "trial has completed with every objective reported yet");
  if (format == "toml") {
    std::cout << "# Pareto front: " << front.size() << " trial(s) of "
              << core::visible(reader.path()) << ";";
    for (const auto& o : spec.objectives)
      std::cout << ' ' << core::visible(o.metric) << " ("
                << (o.mode == core::Mode::Min ? "min" : "max") << ")";
    std::cout << '\n';
  }
  for (const auto id : front) {
    const auto& t = trials[id];
    const auto& values = standings[id].objectives;
    if (format == "flags") {
      std::cout << flags_of(spec, t.config) << '\n';
    } else if (format == "command") {
      std::cout << command_of(reader, t.config, id) << '\n';
    } else if (format == "json") {
      std::cout << "{\"trial\":" << id << ",\"values\":{";
      for (std::size_t k = 0; k < values.size(); ++k)
        std::cout << (k ? "," : "") << core::json_quote(spec.objectives[k].metric) << ':'
                  << core::json_number(values[k]);
      std::cout << "},\"config\":" << spec.space.to_json(t.config) << "}\n";
    } else {
      std::cout << "\n[[trial]]\nid = " << id << '\n';
      for (std::size_t k = 0; k < values.size(); ++k)
        std::cout << slurmtune::config::toml_key(spec.objectives[k].metric) << " = "
                  << core::json_number(values[k]) << '\n';
      std::cout << "[trial.config]\n";
      for (std::size_t i = 0; i < spec.space.parameters().size(); ++i)
        if (t.config.is_active(i))
          std::cout << slurmtune::config::toml_key(spec.space.parameters()[i].name) << " = "
                    << slurmtune::config::toml_value(t.config.values[i]) << '\n';
    }
  }
}

}  // namespace

int best_command(const Args& args) {
  po::options_description options("best options");
  options.add_options()("study-file", po::value<std::string>()->required(), "results file (HDF5)")(
      "format,f", po::value<std::string>()->default_value("toml"),
      "toml | json | flags | command (the study's [trial] command with the configuration)")(
      "include-failed", "a trial that failed may be named best (by default it never is)");
  po::positional_options_description positional;
  positional.add("study-file", 1);
  po::variables_map vm;
  if (!parse_options(
          args, "slurmtune best STUDY.h5 [--format toml|json|flags|command] [--include-failed]",
          options, positional, vm))
    return kSuccess;
  const auto format = vm["format"].as<std::string>();
  if (format != "toml" && format != "json" && format != "flags" && format != "command")
    throw po::error("--format must be toml, json, flags or command, not '" + format + "'");
  DamagedFileGuard guard(vm["study-file"].as<std::string>());
  const store::StudyReader reader(vm["study-file"].as<std::string>());
  guard.opened();
  const auto& spec = reader.spec();
  const auto trials = reader.trials();
  const auto standings = store::trial_standings(reader, trials);
  if (spec.multi_objective()) {
    print_pareto_front(reader, trials, standings, format);
    return kSuccess;
  }
  const bool include_failed = vm.count("include-failed") > 0;
  const auto candidates = best_candidates(trials, standings, include_failed);
  const store::TrialRecord* best = best_trial(candidates, spec.mode);
  if (!best)
    throw InputError(reader.path() + ": no " + (spec.constraints.empty() ? "" : "feasible ") +
                     "trial " + (include_failed ? "" : "that did not fail ") + "has reported " +
                     spec.metric + " yet" +
                     (include_failed ? "" : " (--include-failed also considers failed trials)"));
  const auto& params = spec.space.parameters();
  const core::Configuration config = reader.config_at_best(*best);
  if (format == "json") {
    std::cout << spec.space.to_json(config) << '\n';
  } else if (format == "flags") {
    std::cout << flags_of(spec, config) << '\n';
  } else if (format == "command") {
    std::cout << command_of(reader, config, best->id) << '\n';
  } else {
    // The comment is one line whatever the names hold (control characters shown as \u).
    std::cout << "# best trial " << best->id << ": " << core::visible(spec.metric) << " = "
              << core::json_number(best->best_value) << " at "
              << core::visible(spec.scheduler.resource) << " " << core::json_number(best->best_step)
              << " (" << core::visible(reader.path()) << ")\n";
    for (std::size_t i = 0; i < params.size(); ++i)
      if (config.is_active(i))
        std::cout << slurmtune::config::toml_key(params[i].name) << " = "
                  << slurmtune::config::toml_value(config.values[i]) << '\n';
  }
  return kSuccess;
}

}  // namespace slurmtune::cli
