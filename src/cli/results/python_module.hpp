#pragma once
// Commands drawn by slurmtune's Python package (`html`, `dashboard`): they run
// `python3 -m MODULE ARGS...` with the bundled package first on PYTHONPATH, no shell in
// between; the interpreter is $SLURMTUNE_PYTHON, else the one the build found importing
// their packages (CMake's SLURMTUNE_PYTHON), else python3 on PATH.
#include <string>

#include "cli/commands.hpp"

namespace slurmtune::cli {

/// Prints `usage` for --help or -h (answered here, so that the help and the man page
/// made from it need no Python); else replaces this process with `python -m module
/// args...`, and throws naming what the module `needs` (its Python packages) when no
/// interpreter can be started.
int python_command(const std::string& command, const char* usage, const std::string& module,
                   const Args& args, const std::string& needs);

}  // namespace slurmtune::cli
