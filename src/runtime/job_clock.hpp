#pragma once
// When the Slurm job `slurmtune run` lives in ends, for the allocation's clock
// (core::AllocationClock): SLURM_JOB_END_TIME where Slurm sets it (23.02 and later), else
// `squeue -h -j JOB -o %L`, asked with a bounded wait.
#include <map>
#include <optional>
#include <string>

namespace slurmtune::runtime {

struct TimeLeft {
  std::optional<double> seconds;  ///< nullopt: no limit known (no job, UNLIMITED, no answer)
  std::string source;             ///< for the log: "SLURM_JOB_END_TIME", "squeue", or why none
};

/// Seconds left in the job `env` describes. `scratch` is a file squeue's answer may use.
TimeLeft slurm_time_left(const std::map<std::string, std::string>& env, const std::string& scratch,
                         const std::string& squeue = "squeue");

}  // namespace slurmtune::runtime
