#pragma once
// The coordinator's log: one line per event on stderr (the job's log under sbatch),
// stamped with the wall-clock time so lines can be matched with Slurm's own logs.
#include <string_view>

namespace slurmtune::runtime {

void log_line(std::string_view message);

}  // namespace slurmtune::runtime
