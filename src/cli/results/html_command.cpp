// `slurmtune html STUDY.h5 [-o PAGE.html]`: one self-contained HTML page about a study
// file (doc/python.md#the-html-page). The page is drawn by slurmtune's Python package
// (share/slurmtune/python/slurmtune/report_html.py, with matplotlib): this command runs
// it with the bundled package first on PYTHONPATH, no shell in between.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/results/python_module.hpp"

namespace slurmtune::cli {

int html_command(const Args& args) {
  // Answered here, so that the help (and the man page made from it) needs no Python.
  constexpr const char* kUsageText =
      "usage: slurmtune html STUDY.h5 [-o PAGE.html] [--curves N]\n\n"
      "One self-contained HTML page about a results file: summary, Slurm context, plots\n"
      "(inline SVG; hover a curve for its trial, filter by outcome), best trials,\n"
      "decisions and failures. It opens from a file, with no network.\n\n"
      "  -o, --output PAGE.html  the page to write (default: STUDY.html)\n"
      "  --curves N              trials whose curves and configurations are drawn (1000)\n\n"
      "The page is drawn by slurmtune's Python package with matplotlib: the interpreter is\n"
      "$SLURMTUNE_PYTHON, else python3, with numpy, h5py, pandas and matplotlib.\n";
  for (const auto& arg : args)
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsageText;
      return kSuccess;
    }
  exec_python_module("html", "slurmtune.report_html", args, "numpy, h5py, pandas and matplotlib");
}

}  // namespace slurmtune::cli
