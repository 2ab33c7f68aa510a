#pragma once
// The `slurmtune` subcommands. Each takes the arguments after its name and returns the
// process exit status; errors are thrown and reported once, by main().
#include <string>
#include <vector>

namespace slurmtune::cli {

using Args = std::vector<std::string>;

/// Exit statuses shared by every subcommand (documented in doc/cli.md).
enum ExitStatus : int {
  kSuccess = 0,
  kFailure = 1,  ///< bad input, failed run
  kUsage = 2,    ///< bad command line
  kStop = 3,     ///< report: the study says stop
  kPause = 4,    ///< report: the study says pause (checkpoint and exit)
  // run: 75 (runtime::kMoreWorkLeft) when stopped early with work left
};

int validate_command(const Args& args);
int replay_command(const Args& args);
int simulate_command(const Args& args);
int status_command(const Args& args);
int best_command(const Args& args);
int export_command(const Args& args);
int run_command(const Args& args);
int report_command(const Args& args);
int rank_exec_command(const Args& args);
int worker_command(const Args& args);
int join_command(const Args& args);
int recover_command(const Args& args);
int html_command(const Args& args);
int dashboard_command(const Args& args);

}  // namespace slurmtune::cli
