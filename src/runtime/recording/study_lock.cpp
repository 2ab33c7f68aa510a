#include "runtime/recording/study_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/text.hpp"
#include "protocol/wire/unique_fd.hpp"
#include "runtime/this_process.hpp"
#include "store/study_writer.hpp"

namespace slurmtune::runtime {
namespace {

constexpr std::size_t kMaxLockBytes = 4096;  // a lock file is a few short lines

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// Field 22 of /proc/PID/stat: the process's start time in clock ticks after boot. The
// second field (the program's name) may hold spaces and parentheses: fields are counted
// from its closing parenthesis.
std::string process_start(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return {};
  const auto close = text.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int k = 3; k <= 22 && fields >> field; ++k)
    if (k == 22) return field;
  return {};
}

bool pid_runs(long pid) {
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string text_of(const LockHolder& h) {
  return "host=" + h.host + "\npid=" + std::to_string(h.pid) + "\nstarted=" + h.started +
         "\njob=" + h.job + "\nrestart=" + h.restart + "\nsince=" + h.since + "\n";
}

LockHolder parse_holder(const std::string& text) {
  LockHolder h;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq);
    const std::string value = core::visible(line.substr(eq + 1));
    if (key == "host") h.host = value;
    if (key == "pid") h.pid = std::strtol(value.c_str(), nullptr, 10);
    if (key == "started") h.started = value;
    if (key == "job") h.job = value;
    if (key == "restart") h.restart = value;
    if (key == "since") h.since = value;
  }
  return h;
}

// nullopt-like empty string with `exists` false when the file is gone.
std::string read_lock(const std::string& path, bool& exists) {
  std::ifstream in(path, std::ios::binary);
  exists = static_cast<bool>(in);
  std::string text(kMaxLockBytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

[[noreturn]] void refuse(const std::string& path, const LockHolder& holder,
                         const LockHolder& self) {
  if (holder.host.empty() || holder.pid <= 0)
    throw InputError(path + ": the study's lock names no holder (a damaged lock, or one " +
                     "being written now); if no `slurmtune run` of this study is going on, " +
                     "remove it and run again");
  std::string message = "the study is being run by " + StudyLock::who(holder) +
                        "; a study has one writer (" + path + ")";
  if (holder.host == self.host)
    message += ": wait for it to end, or stop it (kill " + std::to_string(holder.pid) + ")";
  else
    message += ": this host cannot check a process on " + holder.host + "; once that run has " +
               "ended" + (holder.job.empty() ? "" : " (squeue -j " + holder.job + ")") +
               ", remove the lock and run again";
  throw InputError(message);
}

}  // namespace

std::string StudyLock::who(const LockHolder& h) {
  std::string out = "pid " + std::to_string(h.pid) + " on host " + h.host;
  if (!h.job.empty()) out += " (Slurm job " + h.job + ")";
  if (!h.since.empty()) out += ", since " + h.since;
  return out;
}

std::optional<LockHolder> StudyLock::holder_of(const std::string& path) {
  bool exists = false;
  const std::string text = read_lock(path, exists);
  if (!exists) return std::nullopt;
  return parse_holder(text);
}

LockHolder StudyLock::this_process() {
  LockHolder self;
  self.host = host_name();
  self.pid = static_cast<long>(::getpid());
  self.started = process_start(self.pid);
  self.job = environment("SLURM_JOB_ID");
  self.restart = environment("SLURM_RESTART_COUNT");
  self.since = store::iso8601_now();
  return self;
}

std::string StudyLock::why_stale(const LockHolder& holder, const LockHolder& self) {
  if (holder.host.empty() || holder.pid <= 0) return {};
  if (!holder.job.empty() && holder.job == self.job && holder.restart != self.restart)
    return "it was taken by an earlier run of Slurm job " + holder.job + " (restart " +
           (holder.restart.empty() ? "0" : holder.restart) + "), which Slurm has ended";
  if (holder.host != self.host) return {};
  if (!pid_runs(holder.pid)) return "its holder, " + who(holder) + ", no longer runs";
  const std::string started = process_start(holder.pid);
  if (!holder.started.empty() && !started.empty() && started != holder.started)
    return "its holder, " + who(holder) + ", has ended (the pid now belongs to another process)";
  return {};
}

StudyLock::StudyLock(std::string path, void (*note)(std::string_view), const JobEnded& job_ended)
    : path_(std::move(path)) {
  const LockHolder self = this_process();
  contents_ = text_of(self);
  // A few tries: a stale lock replaced, or one that vanished as it was read.
  for (int attempt = 0; attempt < 4; ++attempt) {
    protocol::UniqueFd fd(::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (fd) {
      if (::write(fd.get(), contents_.data(), contents_.size()) !=
              static_cast<ssize_t>(contents_.size()) ||
          ::fsync(fd.get()) != 0) {
        const int error = errno;
        ::unlink(path_.c_str());
        throw InputError(path_ + ": cannot write the study's lock: " + std::strerror(error));
      }
      return;
    }
    if (errno != EEXIST)
      throw InputError(path_ + ": cannot create the study's lock: " + std::strerror(errno));
    bool exists = false;
    const std::string text = read_lock(path_, exists);
    if (!exists) continue;  // its holder just let go
    const LockHolder holder = parse_holder(text);
    std::string stale = why_stale(holder, self);
    if (stale.empty() && job_ended && !holder.job.empty() && holder.host != self.host)
      stale = job_ended(holder);
    if (stale.empty()) refuse(path_, holder, self);
    // Replaced only if it is still the lock just judged: moved aside first (atomic), and
    // put back when another run took the lock in between.
    const std::string aside = path_ + ".stale." + std::to_string(self.pid);
    if (::rename(path_.c_str(), aside.c_str()) != 0) continue;
    bool moved = false;
    if (read_lock(aside, moved) != text) {
      // Another run took the lock in between: theirs goes back (link refuses to replace
      // a third run's lock, which then stands).
      [[maybe_unused]] const int restored = ::link(aside.c_str(), path_.c_str());
      ::unlink(aside.c_str());
      continue;
    }
    ::unlink(aside.c_str());
    if (note) note("replaced the study's stale lock " + path_ + ": " + stale);
  }
  throw InputError(path_ + ": the study's lock kept changing hands; is another `slurmtune run` " +
                   "of this study starting? Run again once it has");
}

StudyLock::~StudyLock() {
  // Removed only while it still holds what this process wrote (never another's).
  bool exists = false;
  if (read_lock(path_, exists) == contents_) ::unlink(path_.c_str());
}

}  // namespace slurmtune::runtime
