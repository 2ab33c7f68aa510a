#pragma once
// What slurmtune reads as a file must be a regular file: opening a named pipe blocks
// until something writes to it (validate and simulate --curves waited for ever; status
// gave up after 20 s and called the file corrupted), and a folder or a device is no
// study, results or curves file either. Checked before the first open.
#include <string>

namespace slurmtune::core {

/// Throws InputError "PATH: not a regular file (a named pipe); WHAT must be a regular
/// file" when `path` exists and is anything else (symbolic links are followed). A missing
/// path passes: the caller's open says so in its own words.
void require_regular_file(const std::string& path, const std::string& what);

}  // namespace slurmtune::core
