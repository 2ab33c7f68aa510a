#pragma once
// The coordinator's log: one line per event on stderr (the job's log under sbatch),
// stamped with the wall-clock time so lines can be matched with Slurm's own logs.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace slurmtune::runtime {

void log_line(std::string_view message);

/// While one exists (the coordinator makes one per turn of its loop), log_line collects
/// lines in memory; the last one to end writes them in one write. At 16,384 trials a
/// rung crossing logs thousands of decisions in a second, and a write(2) each took 7 %
/// of the loop. A line waits at most a turn (milliseconds); at most kMaxBatchedLog bytes
/// wait, beyond that the batch is written at once. Any thread may log meanwhile.
class LogBatch {
 public:
  LogBatch();
  ~LogBatch();
  LogBatch(const LogBatch&) = delete;
  LogBatch& operator=(const LogBatch&) = delete;
};
inline constexpr std::size_t kMaxBatchedLog = 1 << 16;

/// The longest message a log line carries (longer ones are cut, marked with an ellipsis).
inline constexpr std::size_t kMaxLogMessage = 8192;
/// `message` as log_line writes it: cut to kMaxLogMessage bytes, control and invisible
/// bidirectional characters written as \uXXXX (a metric name holding ESC coloured the
/// terminal), and every line after the first indented, so that text from a trial cannot
/// forge a line of the log.
std::string loggable(std::string_view message);

/// Log lines that a peer can provoke at will (refused connections, failed accepts):
/// at most `burst` lines per `interval`; the rest are counted and the next line that
/// goes out says how many were left out, so a flood costs a few lines, not gigabytes.
/// Lines still left out when the flood ends are counted by tick() and the destructor.
class ThrottledLog {
 public:
  using Clock = std::chrono::steady_clock;
  /// `what` names the lines in the count ("control plane").
  explicit ThrottledLog(std::string what, int burst = 10,
                        std::chrono::seconds interval = std::chrono::seconds(10))
      : what_(std::move(what)), burst_(burst), interval_(interval) {}
  ~ThrottledLog();
  ThrottledLog(const ThrottledLog&) = delete;
  ThrottledLog& operator=(const ThrottledLog&) = delete;
  /// Logs `message` unless this interval's burst is spent; returns whether it did.
  bool line(std::string_view message, Clock::time_point now = Clock::now());
  /// Call now and then: once the interval is over, says how many lines were left out.
  void tick(Clock::time_point now = Clock::now());
  std::uint64_t left_out() const { return left_out_total_; }

 private:
  void say_left_out();

  std::string what_;
  int burst_;
  Clock::duration interval_;
  Clock::time_point window_start_{};
  int in_window_ = 0;
  std::uint64_t left_out_ = 0;        // since the last line that went out
  std::uint64_t left_out_total_ = 0;  // over the log's life
};

}  // namespace slurmtune::runtime
