#include "runtime/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

#include "core/text.hpp"

namespace slurmtune::runtime {

std::string loggable(std::string_view message) {
  const std::string fitted = core::fit_utf8(message, kMaxLogMessage);
  std::string out;
  out.reserve(fitted.size());
  std::size_t from = 0;
  while (true) {
    const std::size_t newline = fitted.find('\n', from);
    out += core::visible(std::string_view(fitted).substr(from, newline - from));
    if (newline == std::string::npos) break;
    out += "\n    ";  // a continuation line cannot pass for a line of its own
    from = newline + 1;
  }
  return out;
}

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
  line += loggable(message);
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
