#pragma once
// The process of one trial attempt: a child of the coordinator (the program itself,
// mpirun or srun), or a child of a worker step on the trial's node ([resources] launch =
// "worker"), which the coordinator signals and learns the end of by messages.
#include <functional>
#include <optional>

#include "runtime/launch/child_process.hpp"

namespace slurmtune::runtime {

class TrialProcess {
 public:
  /// Sends a signal to a remote trial's process group (SIGNAL to its worker).
  using RemoteSignal = std::function<void(int signal)>;

  TrialProcess() = default;
  explicit TrialProcess(ChildProcess local) : local_(std::move(local)) {}
  static TrialProcess remote(RemoteSignal signal);

  bool is_remote() const { return static_cast<bool>(remote_signal_); }
  /// The local child's process id (-1 for a remote trial, or none started).
  pid_t local_pid() const { return is_remote() ? -1 : local_.pid(); }
  /// To the trial's process group; a remote one that has ended is left alone.
  void signal_group(int signal) const;
  /// The exit status once the process has ended (a local child is reaped here).
  const std::optional<ExitStatus>& poll();
  const std::optional<ExitStatus>& status() const;
  /// A remote process ended (its worker said EXITED, or the worker was lost).
  void ended(const ExitStatus& status) { remote_status_ = status; }

 private:
  ChildProcess local_;
  RemoteSignal remote_signal_;
  std::optional<ExitStatus> remote_status_;
};

}  // namespace slurmtune::runtime
