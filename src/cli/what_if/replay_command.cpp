#include <fstream>
#include <iostream>

#include "cli/options.hpp"
#include "config/study_file.hpp"
#include "core/error.hpp"
#include "core/replay/replay.hpp"
#include "core/search/sampler_spec.hpp"
#include "core/study/prior_start.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/suggester_factory.hpp"
#include "store/warm_start.hpp"

namespace slurmtune::cli {
namespace {

// The defaults that followed the replayed run's trials at once, as `run` and `simulate`
// resolved them; a run's results file records them, the study file cannot.
void resolve_trials_at_once(core::StudySpec& study, const po::variables_map& vm) {
  const bool given = vm.count("trials-at-once") > 0;
  if (given && vm["trials-at-once"].as<std::size_t>() == 0)
    throw InputError(
        "--trials-at-once 0: give the trials the replayed run ran at once (1 or more)");
  if (!core::prior_start_follows_trials_at_once(study.sampler)) return;
  if (!given)
    throw InputError(study.path + ": [sampler] prior starts with the earlier best max(" +
                     std::to_string(core::kDefaultPriorExact) +
                     ", half the trials run at once) as they were, since prior_exact is not "
                     "named: give --trials-at-once N (the replayed run's workers or "
                     "allocation), or name prior_exact as its results file recorded it");
  core::resolve_prior_start(study, vm["trials-at-once"].as<std::size_t>());
}

}  // namespace

int replay_command(const Args& args) {
  po::options_description options("replay options");
  options.add_options()("study", po::value<std::string>()->required(), "study file (TOML)")(
      "events", po::value<std::string>()->required(), "event log (JSON lines; '-' for stdin)")(
      "trials-at-once", po::value<std::size_t>(),
      "the trials the replayed run ran at once (simulate's workers, or what run's allocation "
      "held): a prior's first wave follows it unless the study file names prior_exact");
  po::positional_options_description positional;
  positional.add("study", 1).add("events", 1);
  po::variables_map vm;
  if (!parse_options(args, "slurmtune replay STUDY.toml EVENTS.jsonl", options, positional, vm))
    return kSuccess;
  auto study = config::load_study_file(vm["study"].as<std::string>());
  store::load_warm_start(study);
  resolve_trials_at_once(study, vm);
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
