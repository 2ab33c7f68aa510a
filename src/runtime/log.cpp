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

namespace slurmtune::runtime {

ThrottledLog::~ThrottledLog() {
  say_left_out();
}

void ThrottledLog::say_left_out() {
  if (left_out_ == 0) return;
  log_line(what_ + ": " + std::to_string(left_out_) + " similar line(s) left out");
  left_out_ = 0;
}

void ThrottledLog::tick(Clock::time_point now) {
  if (left_out_ > 0 && now - window_start_ >= interval_) {
    say_left_out();
    in_window_ = 0;
  }
}

bool ThrottledLog::line(std::string_view message, Clock::time_point now) {
  if (in_window_ == 0 || now - window_start_ >= interval_) {
    window_start_ = now;
    in_window_ = 0;
  }
  if (in_window_ >= burst_) {
    ++left_out_;
    ++left_out_total_;
    return false;
  }
  ++in_window_;
  if (left_out_ == 0) {
    log_line(message);
  } else {
    log_line(std::string(message) + " (" + std::to_string(left_out_) +
             " similar line(s) left out before this one)");
    left_out_ = 0;
  }
  return true;
}

}  // namespace slurmtune::runtime
