#include "cli/options.hpp"

#include <iostream>

namespace slurmtune::cli {

bool parse_options(const Args& args, const std::string& synopsis,
                   const po::options_description& visible,
                   const po::positional_options_description& positional, po::variables_map& vm) {
  po::options_description all;
  all.add(visible);
  all.add_options()("help,h", "show this help");
  po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: " << synopsis << "\n\n" << all << '\n';
    return false;
  }
  po::notify(vm);
  return true;
}

}  // namespace slurmtune::cli
