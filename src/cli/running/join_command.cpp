// `slurmtune join STUDY.h5`: inside another sbatch job, adds its nodes to the running
// study as worker steps (doc/slurm.md#joining-jobs; sbatch/join-hpo.sbatch).
#include "cli/options.hpp"
#include "runtime/worker/join.hpp"

namespace slurmtune::cli {

int join_command(const Args& args) {
  po::options_description options("join options");
  runtime::JoinOptions join;
  options.add_options()("study", po::value<std::string>(&join.study)->required(),
                        "the running study's HDF5 file (its STUDY.trials folder holds the "
                        "coordinator's address and token)")(
      "reconnect-timeout", po::value<double>(&join.reconnect_timeout_s)->default_value(600),
      "seconds a worker looks for the study's coordinator (at the start, and after a "
      "coordinator's session ends, e.g. while it requeues)")(
      "srun", po::value<std::string>(&join.srun)->default_value("srun"), "the srun to call")(
      "srun-arg", po::value<std::vector<std::string>>(&join.srun_args)->composing(),
      "extra argument for every worker step (repeatable)");
  po::positional_options_description positional;
  positional.add("study", 1);
  po::variables_map vm;
  if (!parse_options(args, "slurmtune join STUDY.h5 [options]", options, positional, vm))
    return kSuccess;
  return runtime::run_join(join);
}

}  // namespace slurmtune::cli
