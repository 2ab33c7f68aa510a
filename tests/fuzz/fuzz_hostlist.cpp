// libFuzzer target: Slurm hostlists and per-node counts (SLURM_JOB_NODELIST,
// SLURM_JOB_CPUS_PER_NODE), parsed by slurmtune itself. Malformed input throws
// InputError; a list that expands is compressed back to a list that expands to the
// same hosts (checked: a mismatch aborts, which libFuzzer reports).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "core/placement/hostlist.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto hosts = slurmtune::core::expand_hostlist(text);
    if (slurmtune::core::expand_hostlist(slurmtune::core::compress_hostlist(hosts)) != hosts) {
      std::fprintf(stderr, "compress_hostlist does not round-trip\n");
      std::abort();
    }
  } catch (const slurmtune::InputError&) {
  }
  try {
    static_cast<void>(slurmtune::core::expand_counts(text));
  } catch (const slurmtune::InputError&) {
  }
  return 0;
}
