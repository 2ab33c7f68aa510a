#pragma once
// What a failed attempt's error says in one line. An attempt's error is the launcher's
// account ("exit status 1", a fault such as a time limit) on its first line and the tail
// of the trial's stderr after it; the cause is nearly always the tail's last line
// ("ModuleNotFoundError: No module named 'torch'", "can't open file 'train.py'").
#include <string>

namespace slurmtune::core {

/// The error's last non-empty line after the first that srun did not write (srun's last,
/// when the trial wrote none); empty when it has none.
std::string last_error_line(const std::string& error);

/// "FIRST LINE: LAST LINE", or the first line alone: what a log line about the failure
/// shows, and what makes two failures alike (StudyController's fail-fast rule).
std::string failure_summary(const std::string& error);

}  // namespace slurmtune::core
