#include "runtime/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
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

namespace {

struct PendingLog {
  std::mutex mutex;
  int batches = 0;    // LogBatch objects alive
  std::string lines;  // what they collected
};

PendingLog& pending_log() {
  static PendingLog pending;
  return pending;
}

void write_out(std::string& lines) {
  std::fwrite(lines.data(), 1, lines.size(), stderr);
  lines.clear();
}

// "[slurmtune 12:34:56] ": the stamp is made once a second, not once a line.
std::string line_prefix() {
  thread_local std::time_t last = -1;
  thread_local std::string prefix;
  const std::time_t seconds =
      std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  if (seconds != last) {
    std::tm local{};
    ::localtime_r(&seconds, &local);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%H:%M:%S", &local);
    prefix = std::string("[slurmtune ") + stamp + "] ";
    last = seconds;
  }
  return prefix;
}

}  // namespace

void log_line(std::string_view message) {
  std::string line = line_prefix();
  line += loggable(message);
  line += '\n';
  PendingLog& pending = pending_log();
  const std::lock_guard lock(pending.mutex);
  if (pending.batches == 0) return write_out(line);
  pending.lines += line;
  if (pending.lines.size() >= kMaxBatchedLog) write_out(pending.lines);
}

LogBatch::LogBatch() {
  PendingLog& pending = pending_log();
  const std::lock_guard lock(pending.mutex);
  ++pending.batches;
}

LogBatch::~LogBatch() {
  PendingLog& pending = pending_log();
  const std::lock_guard lock(pending.mutex);
  if (--pending.batches == 0 && !pending.lines.empty()) write_out(pending.lines);
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
