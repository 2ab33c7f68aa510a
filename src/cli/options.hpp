#pragma once
// Boost.Program_options glue shared by the subcommands.
#include <boost/program_options.hpp>
#include <string>

#include "cli/commands.hpp"

namespace slurmtune::cli {

namespace po = boost::program_options;

/// Parses `args` against `visible` plus positional `positional`; prints help and returns
/// false when --help was given.
bool parse_options(const Args& args, const std::string& synopsis,
                   const po::options_description& visible,
                   const po::positional_options_description& positional, po::variables_map& vm);

}  // namespace slurmtune::cli
