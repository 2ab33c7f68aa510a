#include <iostream>

#include "cli/damaged_file_guard.hpp"
#include "cli/options.hpp"
#include "cli/quoting.hpp"
#include "cli/study_tables.hpp"
#include "config/toml_quoting.hpp"
#include "core/schedulers/replay.hpp"
#include "core/search/param_value.hpp"
#include "core/text.hpp"

namespace slurmtune::cli {

int best_command(const Args& args) {
  po::options_description options("best options");
  options.add_options()("study-file", po::value<std::string>()->required(), "results file (HDF5)")(
      "format,f", po::value<std::string>()->default_value("toml"), "toml | json | flags");
  po::positional_options_description positional;
  positional.add("study-file", 1);
  po::variables_map vm;
  if (!parse_options(args, "slurmtune best STUDY.h5 [--format toml|json|flags]", options,
                     positional, vm))
    return kSuccess;
  const auto format = vm["format"].as<std::string>();
  if (format != "toml" && format != "json" && format != "flags")
    throw po::error("--format must be toml, json or flags, not '" + format + "'");
  DamagedFileGuard guard(vm["study-file"].as<std::string>());
  const store::StudyReader reader(vm["study-file"].as<std::string>());
  guard.opened();
  const auto& spec = reader.spec();
  const auto trials = reader.trials();
  const store::TrialRecord* best = best_trial(trials, spec.mode);
  if (!best) throw InputError(reader.path() + ": no trial has reported " + spec.metric + " yet");
  const auto& params = spec.space.parameters();
  const core::Configuration config = reader.config_at_best(*best);
  if (format == "json") {
    std::cout << spec.space.to_json(config) << '\n';
  } else if (format == "flags") {
    // One shell word per flag: `eval "set -- $(slurmtune best s.h5 -f flags)"` or
    // `python3 train.py $(...)` only when no value needs quoting.
    const char* separator = "";
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (!config.is_active(i)) continue;  // the best trial has no such parameter
      std::cout << separator
                << shell_word("--" + params[i].name + "=" + core::to_text(config.values[i]));
      separator = " ";
    }
    std::cout << '\n';
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
