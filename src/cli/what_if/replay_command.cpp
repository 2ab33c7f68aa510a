#include <fstream>
#include <iostream>

#include "cli/options.hpp"
#include "config/study_file.hpp"
#include "core/replay/replay.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/suggester_factory.hpp"
#include "store/warm_start.hpp"

namespace slurmtune::cli {

int replay_command(const Args& args) {
  po::options_description options("replay options");
  options.add_options()("study", po::value<std::string>()->required(), "study file (TOML)")(
      "events", po::value<std::string>()->required(), "event log (JSON lines; '-' for stdin)");
  po::positional_options_description positional;
  positional.add("study", 1).add("events", 1);
  po::variables_map vm;
  if (!parse_options(args, "slurmtune replay STUDY.toml EVENTS.jsonl", options, positional, vm))
    return kSuccess;
  auto study = config::load_study_file(vm["study"].as<std::string>());
  store::load_warm_start(study);
  auto scheduler = core::make_scheduler(study.scheduler, study.mode, study.seed, study.name);
  const auto suggester =
      core::make_suggester(study.space, study.sampler, study.mode == core::Mode::Max, study.seed);
  core::connect_model(*scheduler, *suggester);
  core::ReplaySampler sampler{*suggester, study.space,   core::is_model_based(study.sampler.kind),
                              0,          study.metrics, {}};
  const auto path = vm["events"].as<std::string>();
  std::ios::sync_with_stdio(false);
  if (path == "-") {
    core::replay_events(*scheduler, std::cin, std::cout, "<stdin>", &sampler);
    return kSuccess;
  }
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the event log");
  core::replay_events(*scheduler, in, std::cout, path, &sampler);
  return kSuccess;
}

}  // namespace slurmtune::cli
