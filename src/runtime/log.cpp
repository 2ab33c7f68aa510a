#include "runtime/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace slurmtune::runtime {

void log_line(std::string_view message) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm local{};
  ::localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", &local);
  std::string line = "[slurmtune ";
  line += stamp;
  line += "] ";
  line += message;
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace slurmtune::runtime
