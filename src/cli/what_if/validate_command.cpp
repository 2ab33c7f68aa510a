#include <cmath>
#include <iostream>
#include <string>

#include "cli/options.hpp"
#include "config/study_file.hpp"
#include "core/schedulers/rung_ladder.hpp"
#include "store/capacity.hpp"
#include "store/warm_start.hpp"

namespace slurmtune::cli {

namespace {

// The prior's start-up as the study file leaves it: the defaults follow the trials run
// at once, which `run` learns from its allocation (the printed study shows their values
// for up to 11 at once).
std::string prior_exact_text(const core::SamplerSpec& sampler) {
  if (sampler.prior_exact_named) return std::to_string(sampler.mobster.prior_exact);
  return "max(" + std::to_string(core::kDefaultPriorExact) + ", half the trials run at once)";
}

std::string prior_startup_text(const core::SamplerSpec& sampler) {
  if (sampler.prior_startup_named || sampler.prior_exact_named)
    return std::to_string(sampler.mobster.prior_startup.value_or(0));
  return "prior_exact + " + std::to_string(core::kPriorStartupPastExact);
}

// How many of max_trials a model chooses after its random start-up draws: a study of a
// few trials with a model sampler is in fact random search, which the user should know.
void print_model_picks(std::ostream& out, const core::StudySpec& study) {
  const auto& sampler = study.sampler;
  std::size_t startup = 0;
  double random_share = 0;
  switch (sampler.kind) {
    case core::SamplerKind::Tpe:
      startup = sampler.tpe.n_startup_trials;
      break;
    case core::SamplerKind::Mobster:
      startup = sampler.mobster.n_startup_trials;
      random_share = sampler.mobster.random_fraction;
      break;
    case core::SamplerKind::Nsga2:
      startup = sampler.nsga2.population_size;
      break;
    case core::SamplerKind::Bohb:
      random_share = sampler.bohb.random_fraction;
      break;
    default:
      return;  // no model
  }
  const auto total = study.max_trials;
  const auto after = total > startup ? total - startup : 0;
  const auto picks =
      static_cast<std::uint64_t>(std::floor(static_cast<double>(after) * (1 - random_share)));
  out << "# sampler " << core::sampler_keyword(sampler.kind) << ": the model picks about " << picks
      << " of max_trials = " << total << " (" << startup << " start-up draws first";
  if (!sampler.prior_files.empty())
    out << ": the earlier best " << prior_exact_text(sampler) << " as they were, then "
        << sampler.mobster.prior_share << " of them from around the prior's best configurations"
        << (sampler.mobster.prior_check ? ", less if its draws do no better at the first rung" : "")
        << (sampler.mobster.prior_startup
                ? "; a first wave wider than " + prior_startup_text(sampler) +
                      " is the whole space's past that"
                : "");
  if (random_share > 0) out << ", then a share of " << random_share << " drawn at random";
  out << ")\n";
  if (sampler.mobster.prior_model)
    out << "# sampler mobster: the model sees the earlier studies' observations as another task "
           "(prior_model) and learns how far they carry over\n";
  if (picks == 0)
    out << "# warning: with max_trials = " << total
        << " the model never picks: this study is random search; raise max_trials or "
           "lower the start-up draws\n";
}

}  // namespace

int validate_command(const Args& args) {
  po::options_description options("validate options");
  options.add_options()("study", po::value<std::string>()->required(), "study file (TOML)")(
      "quiet,q", "print nothing when the file is valid");
  po::positional_options_description positional;
  positional.add("study", 1);
  po::variables_map vm;
  if (!parse_options(args, "slurmtune validate STUDY.toml", options, positional, vm))
    return kSuccess;
  auto study = config::load_study_file(vm["study"].as<std::string>());
  store::check_results_file_capacity(study);
  const auto sources = store::load_warm_start(study);  // its files must be readable now
  if (!vm.count("quiet")) {
    std::cout << "# " << study.path << ": valid; the resolved study follows\n"
              << config::to_toml(study);
    std::cout << "# grid points: " << study.space.grid_size()
              << ", sampled dimensions: " << study.space.sampled_dimensions() << '\n';
    for (const auto& line : core::describe_rungs(study.scheduler))
      std::cout << "# rungs (" << core::scheduler_keyword(study.scheduler.type) << "): " << line
                << '\n';
    print_model_picks(std::cout, study);
    for (const auto& s : sources) {
      std::cout << (s.key == "prior" ? "# prior: " : "# warm start: ") << s.used << " trials of "
                << s.path;
      if (s.outside) std::cout << " (" << s.outside << " left out: values outside this space)";
      if (s.unfinished) std::cout << " (" << s.unfinished << " unfinished, left out)";
      if (!s.absent.empty()) {
        std::cout << "; it has no";
        for (const auto& name : s.absent)
          std::cout << ' ' << name;
      }
      std::cout << '\n';
    }
  }
  return kSuccess;
}

}  // namespace slurmtune::cli
