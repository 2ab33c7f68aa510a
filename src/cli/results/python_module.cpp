#include "cli/results/python_module.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "core/error.hpp"
#include "runtime/this_process.hpp"

namespace slurmtune::cli {

namespace {

#ifndef SLURMTUNE_DEFAULT_PYTHON
#define SLURMTUNE_DEFAULT_PYTHON ""
#endif

// $SLURMTUNE_PYTHON; else the interpreter the build found with the packages (when it is
// still there); else python3 on PATH.
std::string interpreter() {
  const char* chosen = std::getenv("SLURMTUNE_PYTHON");
  if (chosen && *chosen) return chosen;
  const std::string built = SLURMTUNE_DEFAULT_PYTHON;
  if (!built.empty() && ::access(built.c_str(), X_OK) == 0) return built;
  return "python3";
}

}  // namespace

int python_command(const std::string& command, const char* usage, const std::string& module,
                   const Args& args, const std::string& needs) {
  for (const auto& arg : args)
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return kSuccess;
    }
  const std::string python = interpreter();
  const std::string path = runtime::python_path_with_bundled();
  if (runtime::bundled_python_dir().empty())
    std::cerr << "slurmtune " << command
              << ": slurmtune's Python package is not next to this executable; "
                 "using PYTHONPATH as it is\n";
  if (!path.empty()) ::setenv("PYTHONPATH", path.c_str(), 1);
  std::vector<std::string> argv = {python, "-m", module};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> pointers;
  for (auto& arg : argv)
    pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  ::execvp(pointers[0], pointers.data());
  throw Error("cannot run '" + python + "' (" + std::strerror(errno) +
              "): it needs Python 3.9+ with " + needs + "; set SLURMTUNE_PYTHON to one");
}

}  // namespace slurmtune::cli
