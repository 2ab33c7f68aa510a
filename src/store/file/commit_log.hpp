#pragma once
// The results file's write-ahead log (STUDY.h5-wal): what makes a group commit's rows
// durable before HDF5 has them. A decision that asks a trial for a checkpoint may go out
// only once the report behind it would survive the coordinator's death (issue #62).
// Waiting for an HDF5 commit cost those decisions up to seconds at a rung crossing of
// 16,384 trials, and the commits, one every 10 ms while decisions waited, a third of the
// coordinator's core: each deflates the tables' partial last chunks again whole. A
// record here is one write() of the rows, compressed (below); HDF5 gets them once a second.
//
// The log is two files, its segments (STUDY.h5-wal and STUDY.h5-wal.1), used in turn:
// each holds the batches of one group commit, in the order taken, each framed with its
// length and a CRC-32 (zlib's), after a header that names the commit it follows (its
// base). When the writer hands a commit to HDF5 it goes on in the other segment, which
// the commit before (durable by then) no longer needs: emptied and started again, not
// rewritten, so the loop never copies a log. A resume finds the file's commit row among
// a segment's base and records' commit rows, and writes the records after it, and those
// of the segment that follows, into the file (StudyWriter::apply_log). Own code, not a
// library's: HDF5 1.10 has no journal of its own for SWMR files, and a record is a few
// spans of bytes.
//
// Since format 2 a record is stored compressed with LZ4 (CommitLog::append). The rows are
// fixed-width and mostly zeros (a /trials row is 702 bytes, 576 of them its nodes and
// error text; a /checkpoints row 4,128 bytes for a path of some tens): logged whole they
// were 15 MB a second at 16,384 trials reporting every second, written from the loop into
// the study's folder, on a cluster a parallel file system. Measured on such a study's rows
// (tests/bench/components/bench_log_compression.cpp), with the CRC: LZ4 writes 9 % of
// /trials at 2.9 GB/s and 1 % of /checkpoints at 16 GB/s; deflate at level 1 as much at
// 0.45 and 0.96 GB/s; a squeeze of zero runs of our own 21 % and 2 % at 10 and 19 GB/s.
// LZ4 costs the loop about 4 ms a second there, our own about 1 ms for twice the bytes
// and a codec to keep: the library's. Format 1 logs, which an older slurmtune killed
// mid-study leaves, are still read.
#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "store/file/curve_samples.hpp"
#include "store/file/tables.hpp"

namespace slurmtune::store {

/// The two segments' paths: "/abs/study.h5-wal" and "/abs/study.h5-wal.1" for "study.h5".
std::array<std::string, 2> commit_log_paths(const std::string& results_file);

/// One record's parts: the bytes stay where the batch holds them (a second's /trials rows
/// at 16,384 trials are 11 MB) until CommitLog::append gathers and compresses them.
class LogRecord {
 public:
  LogRecord() = default;
  // Moved, never copied: parts_ point into numbers_' buffer, which a move keeps.
  LogRecord(LogRecord&&) = default;
  LogRecord& operator=(LogRecord&&) = default;
  LogRecord(const LogRecord&) = delete;
  LogRecord& operator=(const LogRecord&) = delete;
  void add_u64(std::uint64_t value);
  /// Borrowed: the bytes must outlive the append.
  void add_bytes(std::span<const std::byte> bytes);
  void add_append(const AppendBatch& batch);
  void add_update(const UpdateBatch& batch);
  void add_curves(const CurveBatch& batch);
  const std::vector<iovec>& parts() const { return parts_; }
  std::size_t size() const { return size_; }

 private:
  std::vector<std::uint64_t> numbers_;  // reserved up front: parts_ point into it
  std::vector<iovec> parts_;
  std::size_t size_ = 0;
  void add(const void* data, std::size_t bytes);
};

/// Reads one record's parts back in the order they were added, checking each against
/// what is left and what a table's rows must be; a malformed record throws InputError
/// naming `where`.
class LogRecordReader {
 public:
  LogRecordReader(std::span<const std::byte> record, std::string where);
  std::uint64_t u64();
  std::vector<std::byte> bytes(std::size_t expected);
  AppendBatch append(std::size_t row_size);
  UpdateBatch update(std::size_t row_size);
  CurveBatch curves();
  /// Throws unless every byte was read.
  void finish() const;

 private:
  std::span<const std::byte> rest_;
  std::string where_;
  std::span<const std::byte> take(std::size_t n, const char* what);
  [[noreturn]] void fail(const std::string& why) const;
};

/// What a log holds: its base commit row and its whole records, in order.
struct LogContents {
  std::vector<std::byte> base;
  std::vector<std::vector<std::byte>> records;
  /// Bytes after the last whole record (a record cut short by the writer's death, or
  /// one whose CRC does not match): ignored, never applied.
  std::uint64_t ignored_bytes = 0;
};

/// Reads the segment `path` (an InputError naming it for a file that is not a slurmtune
/// log); nullopt for an empty file (a segment emptied, its header not yet written).
std::optional<LogContents> read_commit_log(const std::string& path);

/// The newest whole record of the segment `path`, its CRC checked, found by the records'
/// frames alone: the records before it are passed over unread (a segment is only ever
/// appended to, so only its tail can be cut short or damaged). A reader that wants what
/// the log brings the file to (`status`) reads one record, not a flush interval's rows.
/// nullopt: an empty segment, or none whole; InputError as read_commit_log.
std::optional<std::vector<std::byte>> read_last_record(const std::string& path);

/// The log a writer appends to (the loop's thread alone).
class CommitLog {
 public:
  /// What the log took in and what it wrote for it, over the writer's life (the
  /// coordinator's last lines say).
  struct Volume {
    std::uint64_t records = 0;
    std::uint64_t record_bytes = 0;  ///< the records as the writer made them
    std::uint64_t stored_bytes = 0;  ///< ... and as the segments store them, frames included
  };
  /// Creates or replaces both segments of `results_file`'s log (0600): the first with
  /// `base` and no record, the second empty.
  CommitLog(const std::string& results_file, std::span<const std::byte> base);
  ~CommitLog();  // closes; the files stay (remove)
  CommitLog(const CommitLog&) = delete;
  CommitLog& operator=(const CommitLog&) = delete;

  /// Appends one record to the current segment, compressed (one write; a short write is
  /// finished or thrown, naming the file).
  void append(const LogRecord& record);
  /// Goes on in the other segment, emptied and started with `base`: every record it held
  /// must be in the results file, and `base` be the commit row of the last record
  /// appended, or one the file holds.
  void switch_segments(std::span<const std::byte> base);
  /// Removes both segments (a writer that closed cleanly: HDF5 has every row).
  void remove();
  const Volume& volume() const { return volume_; }

 private:
  std::array<std::string, 2> paths_;
  std::array<int, 2> fds_{-1, -1};  // opened O_APPEND: a write after an emptying starts at 0
  int current_ = 0;
  // A record's parts gathered, then compressed: kept from one append to the next, whose
  // record is about as large.
  std::vector<std::byte> gathered_, stored_;
  Volume volume_;
};

}  // namespace slurmtune::store
