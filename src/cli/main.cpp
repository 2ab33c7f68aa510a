// slurmtune: hyperparameter optimization inside a Slurm allocation.
#include <boost/program_options/errors.hpp>
#include <cstring>
#include <iostream>
#include <string_view>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "slurmtune/version.hpp"

namespace {

struct Subcommand {
  std::string_view name;
  std::string_view summary;
  int (*run)(const slurmtune::cli::Args&);
};

constexpr Subcommand kSubcommands[] = {
    {"run", "run the study: launch trials, judge their reports, record everything",
     slurmtune::cli::run_command},
    {"report", "report metrics from a trial (shell client); exit 0 continue, 3 stop, 4 pause",
     slurmtune::cli::report_command},
    {"validate", "check a study file and print the resolved study",
     slurmtune::cli::validate_command},
    {"replay", "feed recorded events to the study's scheduler, print its decisions",
     slurmtune::cli::replay_command},
    {"simulate", "run the study in virtual time against a synthetic objective",
     slurmtune::cli::simulate_command},
    {"status", "a results file at a glance (counts, best trial, rungs, trials)",
     slurmtune::cli::status_command},
    {"recover", "put a killed study's write-ahead log into its results file (a resume does too)",
     slurmtune::cli::recover_command},
    {"best", "the best configuration of a results file (TOML, JSON or flags)",
     slurmtune::cli::best_command},
    {"export", "a table of a results file as CSV or JSON lines", slurmtune::cli::export_command},
    {"html", "one self-contained HTML page about a results file (plots, tables)",
     slurmtune::cli::html_command},
    {"dashboard", "a live page about a results file, for its owner only (token, 127.0.0.1)",
     slurmtune::cli::dashboard_command},
    {"rank-exec", "run a program with RANK/LOCAL_RANK/NODE_RANK from srun or mpirun",
     slurmtune::cli::rank_exec_command},
    {"join", "add this Slurm job's nodes to a running study (sbatch/join-hpo.sbatch)",
     slurmtune::cli::join_command},
    {"worker", "the process of a worker step (started by slurmtune run or join)",
     slurmtune::cli::worker_command},
};

void print_usage(std::ostream& out) {
  out << "usage: slurmtune <command> [options]\n\ncommands:\n";
  for (const auto& c : kSubcommands)
    out << "  " << c.name << std::string(10 - c.name.size(), ' ') << c.summary << '\n';
  out << "\n'slurmtune <command> --help' describes a command; 'slurmtune --version' prints the "
         "version.\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace slurmtune::cli;
  if (argc < 2) {
    print_usage(std::cerr);
    return kUsage;
  }
  const std::string_view first = argv[1];
  if (first == "--version" || first == "-V") {
    std::cout << "slurmtune " << slurmtune::kVersion << '\n';
    return kSuccess;
  }
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage(std::cout);
    return kSuccess;
  }
  for (const auto& c : kSubcommands) {
    if (c.name != first) continue;
    const Args args(argv + 2, argv + argc);
    try {
      return c.run(args);
    } catch (const boost::program_options::error& e) {
      std::cerr << "slurmtune " << c.name << ": " << e.what() << " (see 'slurmtune " << c.name
                << " --help')\n";
      return kUsage;
    } catch (const slurmtune::Error& e) {
      std::cerr << "slurmtune " << c.name << ": error: " << e.what() << '\n';
      return kFailure;
    } catch (const std::exception& e) {
      std::cerr << "slurmtune " << c.name << ": internal error: " << e.what() << '\n';
      return kFailure;
    }
  }
  std::cerr << "slurmtune: unknown command '" << first << "'\n\n";
  print_usage(std::cerr);
  return kUsage;
}
