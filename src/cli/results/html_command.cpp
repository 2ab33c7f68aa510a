// `slurmtune html STUDY.h5 [-o PAGE.html]`: one self-contained HTML page about a study
// file (doc/python.md#the-html-page). The page is drawn by slurmtune's Python package
// (share/slurmtune/python/slurmtune/report_html.py, with matplotlib): this command runs
// it with the bundled package first on PYTHONPATH, no shell in between.
#include "cli/commands.hpp"
#include "cli/results/python_module.hpp"

namespace slurmtune::cli {

int html_command(const Args& args) {
  constexpr const char* kUsageText =
      "usage: slurmtune html STUDY.h5 [-o PAGE.html] [--curves N]\n\n"
      "One self-contained HTML page about a results file: summary, Slurm context, plots\n"
      "(inline SVG; hover a curve for its trial, filter by outcome), best trials,\n"
      "decisions and failures. It opens from a file, with no network.\n\n"
      "  -o, --output PAGE.html  the page to write (default: STUDY.html)\n"
      "  --curves N              trials whose curves and configurations are drawn (1000)\n\n"
      "The page is drawn by slurmtune's Python package with matplotlib: the interpreter is\n"
      "$SLURMTUNE_PYTHON, else python3, with numpy, h5py, pandas and matplotlib.\n";
  return python_command("html", kUsageText, "slurmtune.report_html", args,
                        "numpy, h5py, pandas and matplotlib");
}

}  // namespace slurmtune::cli
