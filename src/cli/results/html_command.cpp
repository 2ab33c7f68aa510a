// `slurmtune html STUDY.h5 [-o PAGE.html]`: one self-contained HTML page about a study
// file (doc/python.md#the-html-page). The page is drawn by slurmtune's Python package
// (share/slurmtune/python/slurmtune/report_html.py, with matplotlib): this command runs
// it with the bundled package first on PYTHONPATH, no shell in between.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "runtime/this_process.hpp"

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
  const char* chosen = std::getenv("SLURMTUNE_PYTHON");
  const std::string python = chosen && *chosen ? chosen : "python3";
  const std::string path = runtime::python_path_with_bundled();
  if (runtime::bundled_python_dir().empty())
    std::cerr << "slurmtune html: slurmtune's Python package is not next to this executable; "
                 "using PYTHONPATH as it is\n";
  if (!path.empty()) ::setenv("PYTHONPATH", path.c_str(), 1);
  std::vector<std::string> argv = {python, "-m", "slurmtune.report_html"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> pointers;
  for (auto& arg : argv)
    pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  ::execvp(pointers[0], pointers.data());
  throw Error("cannot run '" + python + "' (" + std::strerror(errno) +
              "): it needs Python 3.9+ with numpy, h5py, pandas and matplotlib; set "
              "SLURMTUNE_PYTHON to one");
}

}  // namespace slurmtune::cli
