#include "cli/results/damaged_file_guard.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>

namespace slurmtune::cli {
namespace {

// Written from signal handlers: prepared beforehand, sent with write(2) only.
char crash_message[1024];
char stall_message[1024];
std::size_t crash_length = 0, stall_length = 0;

struct sigaction previous[4];
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE};

extern "C" void on_crash(int) {
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, crash_message, crash_length);
  ::_exit(1);
}

extern "C" void on_stall(int) {
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, stall_message, stall_length);
  ::_exit(1);
}

std::size_t prepare(char* buffer, std::size_t size, const std::string& text) {
  const std::size_t n = std::min(text.size(), size - 1);
  std::memcpy(buffer, text.data(), n);
  buffer[n] = '\0';
  return n;
}

}  // namespace

unsigned open_timeout_s() {
  const char* text = std::getenv("SLURMTUNE_OPEN_TIMEOUT_S");
  const long value = text ? std::strtol(text, nullptr, 10) : 0;
  return value > 0 ? static_cast<unsigned>(value) : 20;
}

DamagedFileGuard::DamagedFileGuard(const std::string& path) {
  const std::string prefix = "slurmtune: error: " + path + ": corrupted: ";
  crash_length = prepare(crash_message, sizeof crash_message,
                         prefix +
                             "the HDF5 library crashed reading it (a damaged file can do "
                             "that to HDF5 1.10); restore it from a copy\n");
  stall_length = prepare(stall_message, sizeof stall_message,
                         prefix + "the HDF5 library did not finish opening it in " +
                             std::to_string(open_timeout_s()) +
                             " s (SLURMTUNE_OPEN_TIMEOUT_S); restore it from a copy\n");
  struct sigaction action {};
  action.sa_handler = on_crash;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  for (std::size_t i = 0; i < std::size(kCrashSignals); ++i)
    ::sigaction(kCrashSignals[i], &action, &previous[i]);
  action.sa_handler = on_stall;
  ::sigaction(SIGALRM, &action, &previous[3]);
  ::alarm(open_timeout_s());
}

void DamagedFileGuard::opened() {
  ::alarm(0);
}

DamagedFileGuard::~DamagedFileGuard() {
  ::alarm(0);
  for (std::size_t i = 0; i < std::size(kCrashSignals); ++i)
    ::sigaction(kCrashSignals[i], &previous[i], nullptr);
  ::sigaction(SIGALRM, &previous[3], nullptr);
}

}  // namespace slurmtune::cli
