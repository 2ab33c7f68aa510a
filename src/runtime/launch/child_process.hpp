#pragma once
// A child process started without a shell: argv goes to execve as it is. The child
// leads its own process group, so a stop signal reaches everything it started (a
// Python script's workers, mpirun's ranks, srun) and nothing else.
#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace slurmtune::runtime {

struct SpawnRequest {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  ///< added to (and overriding) our environment
  std::string cwd;                         ///< empty: ours
  std::string stdout_path, stderr_path;    ///< appended to; empty: inherit ours
  /// SIGUSR1 keeps this process's disposition in the child instead of the default (with
  /// SIG_IGN here: the child ignores it). See worker.cpp: a worker step's trials share its
  /// Slurm step, which the job's time-limit warning reaches as a whole.
  bool inherit_sigusr1 = false;
};

/// How a child ended, from waitpid's status.
struct ExitStatus {
  int code = 0;    ///< exit code when !signaled
  int signal = 0;  ///< terminating signal when signaled
  bool signaled = false;
  bool success() const { return !signaled && code == 0; }
  std::string describe() const;  ///< "exit status 3", "killed by signal 11 (SIGSEGV)"
};

class ChildProcess {
 public:
  /// Starts the child; throws slurmtune::Error naming argv[0] when it cannot start
  /// (not found, not executable).
  static ChildProcess spawn(const SpawnRequest& request);

  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  /// A child still running at destruction is killed (SIGKILL to its group) and reaped:
  /// nothing outlives its owner.
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !status_; }
  /// Sends `signal` to the child's process group.
  void signal_group(int signal) const;
  /// Non-blocking reap; the exit status once the child has ended.
  const std::optional<ExitStatus>& poll();
  /// Blocks until the child ends.
  ExitStatus wait();
  const std::optional<ExitStatus>& status() const { return status_; }

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  void kill_and_reap();
  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
};

/// The standard output of `argv` (run through `scratch`, a file removed afterwards), or
/// an error text when it cannot start, fails, or does not end within `wait_s` (then it
/// is killed): for Slurm's commands, whose controller may not answer.
struct CommandOutput {
  std::optional<std::string> text;
  std::string error;
};
CommandOutput capture_output(const std::vector<std::string>& argv, const std::string& scratch,
                             double wait_s);

/// Environment of this process plus `overrides`, as "NAME=value" strings.
std::vector<std::string> merged_environment(const std::map<std::string, std::string>& overrides);

}  // namespace slurmtune::runtime
