// `slurmtune dashboard STUDY.h5`: a live page about a results file, served to its owner
// only (doc/dashboard.md). The server is slurmtune's Python package
// (share/slurmtune/python/slurmtune/dashboard.py, Tornado; plots drawn in the browser
// with Chart.js, installed with slurmtune).
#include "cli/commands.hpp"
#include "cli/results/python_module.hpp"

namespace slurmtune::cli {

int dashboard_command(const Args& args) {
  constexpr const char* kUsageText =
      "usage: slurmtune dashboard STUDY.h5 [--bind ADDRESS [--all-interfaces]] [--port N]\n"
      "                           [--token-file PATH] [--interval SECONDS]\n"
      "                           [--read-timeout SECONDS]\n\n"
      "Serves a live page about a results file while its study runs (and after): counts,\n"
      "best so far, learning curves by outcome, rungs, parameter importance, parallel\n"
      "coordinates, slices, the Pareto front, running trials with their last report,\n"
      "failures as they happen. It updates without a reload and only reads the file.\n\n"
      "  --bind ADDRESS      the address to listen on (default 127.0.0.1: this host only);\n"
      "                      a wildcard (0.0.0.0, ::) needs --all-interfaces too\n"
      "  --port N            the port (default 0: any free one)\n"
      "  --token-file PATH   where to keep the token, mode 0600 (default\n"
      "                      ~/.slurmtune/dashboard-PID.token, removed at exit)\n"
      "  --interval SECONDS  how often the file is read again (default 1)\n"
      "  --read-timeout SECONDS\n"
      "                      a read that takes longer (a damaged file can make HDF5 loop)\n"
      "                      is ended, and the page says so (default 60)\n\n"
      "Every request needs the random token, also with --bind. The URL is printed with\n"
      "it only to a terminal; elsewhere (a job log) the token is in the token file.\n"
      "From a login node: ssh -L PORT:127.0.0.1:PORT login; from a compute node:\n"
      "ssh -J login -L PORT:127.0.0.1:PORT node (doc/slurm.md).\n\n"
      "The server is slurmtune's Python package: the interpreter is $SLURMTUNE_PYTHON,\n"
      "else the one slurmtune was built with, else python3, with numpy, h5py, pandas and\n"
      "tornado.\n";
  return python_command("dashboard", kUsageText, "slurmtune.dashboard", args,
                        "numpy, h5py, pandas and tornado");
}

}  // namespace slurmtune::cli
