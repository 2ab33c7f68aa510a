#include "runtime/attempts/active_trial.hpp"

#include <algorithm>
#include <csignal>
#include <fstream>

namespace slurmtune::runtime {

protocol::TrialAssignment ActiveTrial::assignment() const {
  protocol::TrialAssignment m;
  m.trial = trial;
  m.attempt = attempt;
  m.params = params_json;
  m.trial_dir = dir;
  if (checkpoint_dir != dir) m.checkpoint_dir = checkpoint_dir;
  m.checkpoint = checkpoint;
  m.checkpoint_step = checkpoint_step;
  return m;
}

std::string ActiveTrial::stderr_tail() const {
  constexpr std::uintmax_t kTail = 2048;
  std::ifstream in(stderr_path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto size = static_cast<std::uintmax_t>(in.tellg());
  // A file emptied by cap_stderr_log (or shared with an attempt that capped it) is
  // read from its new start.
  const std::uintmax_t begin = size < stderr_offset ? 0 : stderr_offset;
  if (size == begin) return {};
  const std::uintmax_t from = std::max(begin, size > kTail ? size - kTail : 0);
  in.seekg(static_cast<std::streamoff>(from));
  std::string text(static_cast<std::size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (from > begin) {
    const auto newline = text.find('\n');
    text = "..." + (newline == std::string::npos ? text : text.substr(newline));
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text;
}

void ActiveTrial::hard_kill(StepCancels& cancels) const {
  if (!slurm_step.empty() && !process.is_remote()) cancels.cancel(slurm_step);
  process.signal_group(SIGKILL);
}

}  // namespace slurmtune::runtime
