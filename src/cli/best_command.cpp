#include <iostream>

#include "cli/damaged_file_guard.hpp"
#include "cli/options.hpp"
#include "cli/study_tables.hpp"
#include "core/schedulers/replay.hpp"
#include "core/search/param_value.hpp"

namespace slurmtune::cli {

int best_command(const Args& args) {
  po::options_description options("best options");
  options.add_options()("study-file", po::value<std::string>()->required(), "study file (HDF5)")(
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
    for (std::size_t i = 0; i < params.size(); ++i)
      std::cout << (i ? " " : "") << "--" << params[i].name << "="
                << core::to_text(config.values[i]);
    std::cout << '\n';
  } else {
    std::cout << "# best trial " << best->id << ": " << spec.metric << " = "
              << core::json_number(best->best_value) << " at " << spec.scheduler.resource << " "
              << core::json_number(best->best_step) << " (" << reader.path() << ")\n";
    for (std::size_t i = 0; i < params.size(); ++i) {
      const auto& v = config.values[i];
      std::cout << params[i].name << " = "
                << (std::holds_alternative<std::string>(v)
                        ? core::json_quote(std::get<std::string>(v))
                        : core::to_text(v))
                << '\n';
    }
  }
  return kSuccess;
}

}  // namespace slurmtune::cli
