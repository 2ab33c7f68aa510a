#include "core/study/failure_text.hpp"

namespace slurmtune::core {

std::string last_error_line(const std::string& error) {
  const auto first_end = error.find('\n');
  if (first_end == std::string::npos) return {};
  std::string launcher_line;  // srun's own last word, if the trial said nothing
  std::size_t end = error.size();
  while (end > first_end) {
    const auto begin = error.rfind('\n', end - 1);  // never npos: first_end lies before
    std::string line = error.substr(begin + 1, end - begin - 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    end = begin;
    if (line.empty()) continue;
    // srun appends its own lines ("srun: error: n1: task 0: Exited with exit code 3",
    // "srun: ... Terminating StepId=41.7") after the trial's: the cause is above them.
    if (line.rfind("srun: ", 0) == 0) {
      if (launcher_line.empty()) launcher_line = line;
      continue;
    }
    return line;
  }
  return launcher_line;
}

std::string failure_summary(const std::string& error) {
  const std::string first = error.substr(0, error.find('\n'));
  const std::string last = last_error_line(error);
  return last.empty() ? first : first + ": " + last;
}

}  // namespace slurmtune::core
