// Test helper: prints the hosts of a hostlist, one per line, as slurmtune expands it,
// so the slurm tests can compare it with `scontrol show hostnames`.
#include <cstdio>

#include "core/error.hpp"
#include "core/placement/hostlist.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hostlist_tool HOSTLIST\n");
    return 2;
  }
  try {
    for (const auto& host : slurmtune::core::expand_hostlist(argv[1]))
      std::printf("%s\n", host.c_str());
  } catch (const slurmtune::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
