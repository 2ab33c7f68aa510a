#include "runtime/launch/child_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include "core/error.hpp"
#include "protocol/wire/unique_fd.hpp"

extern char** environ;

namespace slurmtune::runtime {
namespace {

// posix_spawn's attribute and file-action objects, released on every path out.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  // The coordinator blocks the signals it reads through a signalfd and ignores SIGPIPE;
  // both would be inherited across exec, so the child gets a clean mask and defaults.
  void own_group_with_default_signals(bool inherit_sigusr1) {
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (const int s : {SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGCHLD, SIGPIPE, SIGHUP, SIGQUIT})
      if (s != SIGUSR1 || !inherit_sigusr1) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &defaults);
    posix_spawnattr_setpgroup(&attr_, 0);
    posix_spawnattr_setflags(
        &attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  void redirect(int fd, const std::string& path) {
    if (path.empty()) return;
    posix_spawn_file_actions_addopen(&actions_, fd, path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
  }
  void chdir(const std::string& dir) {
    if (!dir.empty()) posix_spawn_file_actions_addchdir_np(&actions_, dir.c_str());
  }

  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string ExitStatus::describe() const {
  if (!signaled && code > 128 && code < 128 + 65) {
    // srun and shells report a task killed by a signal as 128 + the signal number.
    const char* name = sigabbrev_np(code - 128);
    return "exit status " + std::to_string(code) + " (a task died of signal " +
           std::to_string(code - 128) + (name ? " SIG" + std::string(name) : std::string()) + ")";
  }
  if (!signaled) return "exit status " + std::to_string(code);
  const char* name = sigabbrev_np(signal);
  return "killed by signal " + std::to_string(signal) +
         (name ? " (SIG" + std::string(name) + ")" : std::string());
}

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const std::string name(entry.substr(0, entry.find('=')));
    if (!overrides.contains(name)) env.emplace_back(entry);
  }
  for (const auto& [name, value] : overrides) {
    std::string entry = name;
    entry += '=';
    entry += value;
    env.push_back(std::move(entry));
  }
  return env;
}

ChildProcess ChildProcess::spawn(const SpawnRequest& request) {
  if (request.argv.empty()) throw UsageError("ChildProcess::spawn: empty argv");
  SpawnSetup setup;
  setup.own_group_with_default_signals(request.inherit_sigusr1);
  setup.chdir(request.cwd);
  setup.redirect(STDOUT_FILENO, request.stdout_path);
  setup.redirect(STDERR_FILENO, request.stderr_path);
  std::vector<std::string> argv = request.argv;
  std::vector<std::string> env = merged_environment(request.env);
  auto argv_pointers = pointers(argv);
  auto env_pointers = pointers(env);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), &setup.actions_, &setup.attr_,
                              argv_pointers.data(), env_pointers.data());
  if (rc != 0)
    throw Error("cannot start '" + argv[0] + "': " + std::strerror(rc) +
                (rc == ENOENT ? " (not found on PATH; give the full path)" : ""));
  return ChildProcess(pid);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), status_(other.status_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    status_ = other.status_;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  kill_and_reap();
}

void ChildProcess::kill_and_reap() {
  if (!running()) return;
  signal_group(SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

void ChildProcess::signal_group(int signal) const {
  if (running()) ::kill(-pid_, signal);
}

namespace {
ExitStatus decode(int status) {
  ExitStatus s;
  if (WIFSIGNALED(status)) {
    s.signaled = true;
    s.signal = WTERMSIG(status);
  } else {
    s.code = WEXITSTATUS(status);
  }
  return s;
}
}  // namespace

const std::optional<ExitStatus>& ChildProcess::poll() {
  if (!running()) return status_;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) status_ = decode(status);
  return status_;
}

ExitStatus ChildProcess::wait() {
  while (running()) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, 0);
    if (r == pid_)
      status_ = decode(status);
    else if (r < 0 && errno != EINTR)
      protocol::throw_errno("waitpid");
  }
  if (!status_) throw UsageError("ChildProcess::wait: no child");
  return *status_;
}

CommandOutput capture_output(const std::vector<std::string>& argv, const std::string& scratch,
                             double wait_s) {
  const std::string name = std::filesystem::path(argv.front()).filename().string();
  std::filesystem::remove(scratch);
  ChildProcess child;
  try {
    child = ChildProcess::spawn(SpawnRequest{argv, {}, {}, scratch, {}});
  } catch (const std::exception& e) {
    return {std::nullopt, name + " did not start: " + e.what()};
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  while (!child.poll() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!child.status())
    return {std::nullopt,
            name + " did not answer within " + std::to_string(static_cast<int>(wait_s)) + " s"};
  std::ifstream in(scratch);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(scratch);
  if (!child.status()->success()) return {std::nullopt, name + ": " + child.status()->describe()};
  return {text.str(), {}};
}

}  // namespace slurmtune::runtime
