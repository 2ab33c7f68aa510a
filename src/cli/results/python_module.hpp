#pragma once
// Commands drawn by slurmtune's Python package (`html`, `dashboard`): they run
// `python3 -m MODULE ARGS...` with the bundled package first on PYTHONPATH, no shell in
// between; the interpreter is $SLURMTUNE_PYTHON, else python3.
#include <string>

#include "cli/commands.hpp"

namespace slurmtune::cli {

/// Replaces this process with `python -m module args...`; throws naming what the module
/// `needs` (its Python packages) when no interpreter can be started.
[[noreturn]] void exec_python_module(const std::string& command, const std::string& module,
                                     const Args& args, const std::string& needs);

}  // namespace slurmtune::cli
