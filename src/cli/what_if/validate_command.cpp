#include <iostream>

#include "cli/options.hpp"
#include "config/study_file.hpp"
#include "store/warm_start.hpp"

namespace slurmtune::cli {

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
  const auto sources = store::load_warm_start(study);  // its files must be readable now
  if (!vm.count("quiet")) {
    std::cout << "# " << study.path << ": valid; the resolved study follows\n"
              << config::to_toml(study);
    std::cout << "# grid points: " << study.space.grid_size()
              << ", sampled dimensions: " << study.space.sampled_dimensions() << '\n';
    for (const auto& s : sources) {
      std::cout << "# warm start: " << s.used << " trials of " << s.path;
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
