#include "runtime/launch/trial_process.hpp"

namespace slurmtune::runtime {

TrialProcess TrialProcess::remote(RemoteSignal signal) {
  TrialProcess process;
  process.remote_signal_ = std::move(signal);
  return process;
}

void TrialProcess::signal_group(int signal) const {
  if (!is_remote())
    local_.signal_group(signal);
  else if (!remote_status_)
    remote_signal_(signal);
}

const std::optional<ExitStatus>& TrialProcess::poll() {
  return is_remote() ? remote_status_ : local_.poll();
}

const std::optional<ExitStatus>& TrialProcess::status() const {
  return is_remote() ? remote_status_ : local_.status();
}

}  // namespace slurmtune::runtime
