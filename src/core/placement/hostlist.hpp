#pragma once
// Slurm hostlists and per-node counts, parsed here rather than through libslurm (whose
// hostlist C API changed incompatibly in 23.11 and would tie the binary to one Slurm
// release). Pure functions: the runtime feeds them SLURM_JOB_NODELIST and friends.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace slurmtune::core {

/// Expands "n[1-3,7],gpu[01-02]-ib,login" into n1 n2 n3 n7 gpu01-ib gpu02-ib login.
/// Zero padding of range bounds is kept; several bracket groups in one name multiply
/// ("r[1-2]n[1-2]" -> r1n1 r1n2 r2n1 r2n2). Throws InputError naming the column of a
/// malformed list.
std::vector<std::string> expand_hostlist(std::string_view hostlist);

/// Compresses host names into the shortest hostlist of the same order, merging runs of
/// names that differ only in a trailing number of the same width: n1 n2 n3 n7 -> "n[1-3,7]".
std::string compress_hostlist(const std::vector<std::string>& hosts);

/// Expands Slurm's per-node count form "4(x2),2" into 4 4 2 (SLURM_JOB_CPUS_PER_NODE,
/// SLURM_TASKS_PER_NODE).
std::vector<std::int64_t> expand_counts(std::string_view counts);

}  // namespace slurmtune::core
