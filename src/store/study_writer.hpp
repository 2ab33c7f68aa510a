#pragma once
// The single writer of a results file. One process (the coordinator, or `slurmtune
// simulate`) owns the file; it creates the whole layout, then switches to HDF5's
// single-writer/multiple-reader mode so `slurmtune status` and h5py can read while
// the study runs. Rows are buffered and flushed at least every flush_interval_s: after
// a crash or `kill -9` the file opens (SWMR read, or after a resume) and holds every
// row flushed before it, and a resume (apply_log) adds the rows its write-ahead log holds.
#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/study/checkpoint_retention.hpp"
#include "core/study/study_spec.hpp"
#include "store/schema.hpp"

namespace slurmtune::store {

class Hid;                // store/file/hdf5.hpp
class FlushThread;        // store/file/flush_thread.hpp
class DecisionReplay;     // store/decision_replay.hpp
class DecisionSnapshots;  // store/decision_snapshots.hpp
class CommitLog;          // store/file/commit_log.hpp
class LogRecord;          // store/file/commit_log.hpp

struct WriterOptions {
  double flush_interval_s = 1.0;  ///< buffered rows reach the file at least this often
  int metrics_deflate =
      1;  ///< deflate level of /metrics (-1: none); 1 trades ~25 % speed for 3x smaller files
  bool virtual_clock = false;  ///< times are simulated seconds, not Unix time
  /// Schema of a new file: the current one; tests write older ones to check that they
  /// stay readable and resumable.
  std::int64_t schema_version = kSchemaVersion;
  /// Flushes that come due are written by a thread of their own (flush_thread.hpp), not
  /// on the caller's; explicit flush() calls still return once the file has the rows.
  bool background_flush = false;
  /// Decision snapshots (store/decision_snapshots.hpp) at least this many seconds apart
  /// once keep_decision_snapshots() is called; 0: the file gets no /snapshots slots.
  double snapshot_interval_s = 0;
  /// With background_flush: commits asked for (commit_soon) start no closer together than
  /// this. Each costs a few ms whatever it holds, and back to back at a rung crossing
  /// they took the flush thread most of a core.
  double min_commit_gap_s = 0.01;
  /// With background_flush: a commit asked for (commit_soon) is a record of the results
  /// file's write-ahead log (PATH-wal and PATH-wal.1, store/file/commit_log.hpp), durable
  /// when flush_if_due returns, which also logs the rows that came every 20 ms; HDF5 gets
  /// them at the flush interval, each table flushed once for all the records since. The
  /// log goes when the writer closes cleanly.
  bool write_ahead_log = false;
  /// How long opening an existing file waits for another process's lock on it (a reader
  /// that opens it at that moment): store/file/hdf5.hpp's kFileLockWaitS.
  double lock_wait_s = 30;
};

/// Where a resumed writer continues: the next sequence number (the study-wide order of
/// rows) and the trials that had not ended, with the status the replay derived for them.
struct WriterPosition {
  std::uint64_t next_seq = 0;
  std::vector<std::pair<core::TrialId, TrialStatus>> live;
};

class StudyWriter {
 public:
  /// Creates `path`; refuses to touch an existing file.
  static std::unique_ptr<StudyWriter> create(const std::string& path, const core::StudySpec& spec,
                                             const WriterOptions& options);
  /// Opens an existing results file for appending (resume). The caller has checked that
  /// it belongs to `spec` (see resume.hpp). Clears the "open for writing" flags a
  /// crashed writer leaves behind.
  static std::unique_ptr<StudyWriter> reopen(const std::string& path, const core::StudySpec& spec,
                                             const WriterOptions& options,
                                             const WriterPosition& position);

  ~StudyWriter();  // flushes; logs instead of throwing
  StudyWriter(const StudyWriter&) = delete;
  StudyWriter& operator=(const StudyWriter&) = delete;

  /// `suggestion`: how the configuration was chosen (kept in /trials from schema 2).
  void trial_started(core::TrialId trial, const core::Configuration& config, int bracket,
                     double time, const core::SuggestionInfo& suggestion = {});
  /// `why` (freeze_thaw): the resume event records the rung it resumes for as its
  /// milestone, and a model's choice its expectation there as the prediction, its expected
  /// improvement per unit of resource as the value and a new configuration's as the cutoff.
  void trial_resumed(core::TrialId trial, double time, const core::ResumeReason* why);
  /// One report. `values` holds one value per declared metric (spec.metrics order; NaN
  /// where the report has none); values[0] is the metric the scheduler judged.
  void report(core::TrialId trial, double step, double time, std::span<const double> values,
              const core::ReportOutcome& outcome);
  /// Same with named metrics; an undeclared name throws InputError naming it.
  void report_named(core::TrialId trial, double step, double time,
                    const std::vector<std::pair<std::string, double>>& metrics,
                    const core::ReportOutcome& outcome);
  void trial_ended(core::TrialId trial, core::TrialEnd how, double time,
                   const std::string& error = {});
  /// An attempt failed and the trial will run again: counts the retry, keeps the error.
  void trial_retried(core::TrialId trial, double time, const std::string& error);
  /// A trial that ended while paused (dropped when the study ended) waits at its rung
  /// again: paused, its end time and error cleared, a `reopen` event. The trial must be
  /// live (WriterPosition::live); files of schema 8 on.
  void trial_reopened(core::TrialId trial, double time);
  /// No further trial will start; recorded because schedulers act on it (Hyperband
  /// halves a partial bracket), so a resume must replay it at the same point.
  void admissions_closed(double time);
  void set_nodes(core::TrialId trial, const std::string& nodes);
  /// PBT: the trial resumes as `exploit` says (a row of /exploits, in sequence order).
  void trial_exploited(core::TrialId trial, const core::Exploit& exploit, double time);
  /// Records a checkpoint; a path longer than max_checkpoint_path() throws InputError
  /// (a path is never stored cut).
  void checkpoint(core::TrialId trial, double step, double time, const std::string& relative_path,
                  std::uint64_t bytes);
  /// A checkpoint [checkpoints] removed (/removed_checkpoints; a file of schema 9 or
  /// older, resumed, has no such table and records none).
  void checkpoint_removed(const core::CheckpointRemoval& removal, double time);
  /// The best value of the study's metric a live trial reported so far (NaN: none).
  double best_value(core::TrialId trial) const;
  /// The longest checkpoint path, in bytes, this file's schema stores.
  std::size_t max_checkpoint_path() const;
  /// A checkpoint the scheduler asked for exists (an event: a resume replays it in order,
  /// because PBT clones only checkpoints that exist).
  void checkpoint_saved(core::TrialId trial, double step, double time);

  /// Flushes when flush_interval_s has passed since the last flush, or a commit was asked
  /// for (commit_soon); true if it did (with background_flush: began to, unless the last
  /// one is still being written).
  bool flush_if_due();
  /// Seconds until an asked-for commit may start (min_commit_gap_s), for a loop that
  /// sleeps meanwhile; nullopt when none waits for that gap alone.
  std::optional<double> commit_due_in_s() const;
  /// Writes every buffered row and flushes the file (after a flush being written).
  void flush();

  // Group commits (issue #62): what must be durable before something else happens (a
  // decision that makes a trial save a checkpoint) waits for a commit instead of forcing
  // one. Flushes are numbered from 1 in the order they take rows; each holds every row
  // buffered before it was taken, and a later one is durable only after an earlier one.

  /// The flush that will hold every row buffered so far.
  std::uint64_t commit_ticket() const { return flushes_taken_ + 1; }
  /// The flushes whose rows are in the file or its write-ahead log (all up to this number).
  std::uint64_t durable_ticket() const;
  /// Asks for the next flush as soon as the flush thread is free, not at the interval
  /// (flush_if_due starts it; with write_ahead_log, flush_if_due logs the rows at once).
  /// Without background_flush: flushes now.
  void commit_soon();
  /// Applies the write-ahead log a writer killed before its last commit left beside
  /// `path`: the records after the file's last commit are written and committed, and the
  /// log removed. Before a reader opens the file to resume it. Returns what it did (a line
  /// for the session's log), nullopt where there is no log; a log that does not continue
  /// the file's last commit throws InputError naming it, and changes nothing.
  static std::optional<std::string> apply_log(const std::string& path);
  /// What a background flush reports once durable.
  struct DurableCommit {
    std::uint64_t ticket = 0;
    double waited_s = 0;   ///< from the moment its rows were taken to the thread's start
    double written_s = 0;  ///< the thread's time writing them
  };
  /// Called on the flush thread after each background flush is durable (to wake a loop
  /// that waits for durable_ticket()); set before the first flush.
  void on_durable(std::function<void(const DurableCommit&)> notify);
  /// The CPU time the background flushes have used so far (nullopt without
  /// background_flush: the caller's thread wrote them).
  std::optional<double> flush_thread_cpu_s() const;
  /// What the write-ahead log took in and wrote, as a line for the log (nullopt
  /// without one).
  std::optional<std::string> write_ahead_summary() const;

  /// Writes a decision snapshot every WriterOptions::snapshot_interval_s from now on (and
  /// at the last flush): `replay` holds the state of the rows before this session's
  /// (store::resume_study's replayed_state, loaded; a fresh replay for a new study);
  /// `slot_in_use` the slot the resume started from. `warn` gets, once, why they stopped.
  void keep_decision_snapshots(std::unique_ptr<DecisionReplay> replay, int slot_in_use,
                               std::function<void(const std::string&)> warn);

  /// The coordinator loop's figures the next commit row records (schema 9 on; an older
  /// file resumed does not record them).
  void set_loop_figures(const core::LoopFigures& figures) { loop_figures_ = figures; }

  const StudyLayout& layout() const { return layout_; }
  std::uint64_t metric_rows() const;
  /// The bytes of /trials' and /curves' chunks HDF5 keeps for this writer now (none:
  /// restore_chunk_caches; tests check that opening for SWMR did not undo it).
  std::size_t trials_chunk_cache_bytes() const;
  std::optional<std::size_t> curves_chunk_cache_bytes() const;
  /// Metric rows durable: in the file, or (write_ahead_log) in its log.
  std::uint64_t flushed_metric_rows() const { return flushed_metric_rows_; }

 private:
  /// A report's part of the trial's standing: each objective's last value (schema 10) and
  /// the constraints (mark_constraints), from the values this report carries.
  void mark_standing(std::byte* row, std::span<const double> values);
  /// Constraints (schema 7): the row's constraint values from this report's metrics
  /// (those it carries), and whether they all hold now.
  void mark_constraints(std::byte* row, std::span<const double> values);
  /// Schema 11: the report `seq` bettered the study's best value so far (/improvements).
  void improved(std::uint64_t seq, core::TrialId trial, double time, double value);
  StudyWriter(Hid file, const core::StudySpec& spec, const WriterOptions& options, bool fresh);
  /// An existing results file opened for writing, its "open for writing" flags cleared.
  static Hid open_existing(const std::string& path, double lock_wait_s);
  void open_tables(bool fresh);
  /// With background_flush: the flush thread, and with write_ahead_log the log of `path`.
  void start_flushing(const std::string& path);
  /// After H5Fstart_swmr_write, which leaves open datasets with the file's default chunk
  /// cache (1 MiB; HDF5 issue #1730): /trials and /curves opened again without one.
  void restore_chunk_caches();
  void adopt_live_trials(const WriterPosition& position);
  struct FlushBatch;  // what one flush writes, taken from the buffers
  using Batches = std::vector<std::shared_ptr<FlushBatch>>;
  FlushBatch take_batch();
  /// Writes `batches` in order, flushes each table once, then the last one's commit row.
  void write_batches(const Batches& batches) const;
  void write_tables(const FlushBatch& batch) const;       // its rows, unflushed
  FlushBatch joined_batch(const Batches& batches) const;  // their rows as one batch's
  LogRecord log_record(const FlushBatch& batch) const;    // write_ahead_log
  FlushBatch batch_of_record(std::span<const std::byte> bytes, const std::string& where) const;
  /// The commit the flush interval (or, without a log, a commit asked for) makes due.
  bool commit_if_due();
  /// write_ahead_log: takes the buffered rows and logs them (durable from here on).
  void log_batch();
  /// flush_if_due, except that a commit asked for waits for the loop's own call (one log
  /// record a turn, not one per row).
  void flush_after_row();
  /// Seconds left at `now` of the gap before an asked-for commit (min_commit_gap_s);
  /// nullopt when it is over, or commits are direct.
  std::optional<double> gap_left_s(std::chrono::steady_clock::time_point now) const;
  void recycle(FlushBatch& written) const;  // the appended rows' memory, for the next
  std::vector<std::byte> commit_row() const;
  void write_root_attributes(const core::StudySpec& spec);
  void append_session();
  void event(core::TrialId trial, EventKind kind, double time, const core::ReportOutcome* outcome,
             double step, double value);
  std::byte* live_row(core::TrialId trial);
  bool better(double a, double b) const;

  struct Hdf5Objects;
  std::unique_ptr<Hdf5Objects> h5_;  // declared first: layout_ reads the file's schema
  StudyLayout layout_;
  core::Mode mode_;
  std::vector<std::string> metric_names_;
  std::vector<core::Constraint> constraints_;
  WriterOptions options_;
  std::uint64_t seq_ = 0;
  core::LoopFigures loop_figures_;
  std::chrono::steady_clock::time_point last_flush_;
  bool commit_wanted_ = false;
  std::uint64_t flushes_taken_ = 0;
  std::atomic<std::uint64_t> flushes_durable_ = 0;        // set by the flush thread
  std::function<void(const DurableCommit&)> on_durable_;  // called by it
  std::atomic<std::uint64_t> flushed_metric_rows_ =
      0;  // set by the flush thread (with a log: the loop)
  std::uint64_t session_first_seq_ = 0;
  double study_best_ = std::numeric_limits<double>::quiet_NaN();  // /improvements' last value
  std::unique_ptr<DecisionSnapshots> snapshots_;                  // keep_decision_snapshots
  // write_ahead_log:
  std::unique_ptr<CommitLog> log_;
  Batches logged_;                                   // logged, not yet handed to the flush thread
  std::uint64_t logged_ticket_ = 0;                  // the last batch logged
  std::uint64_t logged_seq_ = 0;                     // seq_ then
  std::chrono::steady_clock::time_point logged_at_;  // and when
  std::vector<std::byte> handed_commit_;             // the commit row of the last batch handed over
  std::uint64_t handed_ticket_ = 0;                  // and its ticket
  bool final_flush_ = true;               // false: apply_log's writer, which only applies
  std::unique_ptr<FlushThread> flusher_;  // last: it writes what is above
};

/// Current time as the results file records it: seconds since the Unix epoch.
double unix_time_s();
/// Current time in UTC, ISO 8601 to the second ("2026-11-28T08:29:04Z"): the file's
/// `created` attribute, and the time a study's lock was taken.
std::string iso8601_now();

}  // namespace slurmtune::store
