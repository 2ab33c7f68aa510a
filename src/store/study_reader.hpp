#pragma once
// Reading a results file: `slurmtune status/best/export`, resume, and anything else that
// must not disturb a running writer. Files are opened in SWMR-read mode, which works on
// a file being written, on a cleanly closed file, and on a file whose writer crashed.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/study/checkpoint_retention.hpp"
#include "core/study/study_spec.hpp"
#include "store/schema.hpp"

namespace slurmtune::store {

class Hid;  // store/file/hdf5.hpp, kept out of this header: its includers do not see <hdf5.h>

/// The file is not a readable slurmtune results file (not HDF5, not a study, truncated,
/// newer schema). what() says which and what to do.
class ResultsFileFormatError : public InputError {
 public:
  using InputError::InputError;
};

struct TrialRecord {
  std::uint64_t id = 0;
  TrialStatus status = TrialStatus::Pending;
  int bracket = 0, rung = -1, retries = 0;
  double start_time = 0, end_time = 0, last_step = 0, last_value = 0, best_value = 0, best_step = 0;
  std::uint64_t reports = 0;
  std::string nodes, error;
  core::Configuration config;
  core::SuggestionInfo suggestion;  ///< schema 1 files: blind, position 0
  /// Schema 10 on: the /metrics seq of the report of best_value (none before a report).
  std::optional<std::uint64_t> best_seq;
  /// Schema 10 on: the last reported value of each objective (NaN: never); empty before.
  std::vector<double> objectives;
  /// Schema 7 on, with constraints: each constraint's value at the last report of its
  /// metric (<= 0 holds; NaN: never reported).
  std::vector<double> constraints;
};

struct MetricRecord {
  std::uint64_t seq = 0, trial = 0;
  double step = 0, time = 0;
  std::vector<double> values;  ///< one per declared metric
};

struct EventRecord {
  std::uint64_t seq = 0, trial = 0;
  double time = 0;
  EventKind kind = EventKind::Start;
  int rung = -1;
  double step = 0, milestone = 0, value = 0, cutoff = 0;
  /// Where a predicting scheduler expected the trial to end (schema 5 on).
  std::optional<core::PredictedFinal> prediction;
};

struct CheckpointRecord {
  std::uint64_t trial = 0;
  double step = 0, time = 0;
  std::uint64_t size = 0;
  std::string path;
};

/// PBT: `trial`, exploited at its `step`, continued from `donor`'s checkpoint at
/// `donor_step` with `config` (the donor's, explored as `operations` says).
struct ExploitRecord {
  std::uint64_t seq = 0;
  double time = 0;
  std::uint64_t trial = 0;
  double step = 0;
  std::uint64_t donor = 0;
  double donor_step = 0;
  std::string operations;
  core::Configuration config;
};

/// A checkpoint [checkpoints] removed (schema 10 on).
struct RemovedCheckpoint {
  core::CheckpointRemoval removal;
  double time = 0;  ///< when
};

struct SessionRecord {
  double started = 0;
  std::string host, slurm_job_id, version;
  std::uint64_t first_seq = 0;
};

/// Where each session after the first began among the events, for one walk through them
/// in sequence order (StudyReader::for_each_in_seq_order): crossed(seq) is true at the
/// first record at or past a session's first_seq. What a sampler learns from recorded times
/// must not span a session's end (a trial restarts without a recorded beginning).
class SessionBoundaries {
 public:
  explicit SessionBoundaries(const std::vector<SessionRecord>& sessions);
  bool crossed(std::uint64_t seq);

 private:
  std::vector<std::uint64_t> starts_;
  std::size_t next_ = 0;
};

/// Row counts of the last complete flush (/commit). Rows beyond them belong to a flush
/// the writer did not finish and are not read.
struct CommittedCounts {
  std::uint64_t next_seq = 0, trials = 0, metrics = 0, events = 0, checkpoints = 0, sessions = 0;
  double time = 0;                        ///< Unix time of that flush
  std::uint64_t exploits = 0;             ///< schema 3 on
  std::uint64_t removed_checkpoints = 0;  ///< schema 10 on
  /// Schema 9 on, written by `slurmtune run` (a simulation's has no loop, 0 turns).
  std::optional<core::LoopFigures> loop;
};

class StudyReader {
 public:
  /// Opens and validates `path` (SWMR read).
  explicit StudyReader(const std::string& path);
  ~StudyReader();
  StudyReader(StudyReader&&) noexcept;
  StudyReader& operator=(StudyReader&&) noexcept;

  const std::string& path() const { return path_; }
  /// The study file that created this study, as recorded in the file.
  const core::StudySpec& spec() const { return spec_; }
  const StudyLayout& layout() const { return *layout_; }
  std::int64_t schema_version() const { return schema_version_; }
  /// Root attribute as text ("" when absent).
  std::string attribute(const std::string& name) const;
  /// Whether the root has attribute `name` (of any type).
  bool has_attribute(const std::string& name) const;

  const CommittedCounts& committed() const { return committed_; }
  std::vector<TrialRecord> trials() const;
  std::uint64_t metric_rows() const;
  /// Calls `sink` for every metric row in file order, reading `chunk_rows` at a time.
  void for_each_metric(const std::function<void(const MetricRecord&)>& sink,
                       std::uint64_t chunk_rows = 262144, std::uint64_t first_row = 0) const;
  /// The first /metrics row whose seq is `seq` or later (rows are in seq order): a
  /// binary search, reading one row per step.
  std::uint64_t first_metric_row_at(std::uint64_t seq) const;
  std::vector<EventRecord> events() const;
  /// Calls `sink` for every /events row in file order, reading `chunk_rows` at a time:
  /// what a reader that only counts or keeps a few uses (a study of a billion reports has
  /// millions of events).
  void for_each_event(const std::function<void(const EventRecord&)>& sink,
                      std::uint64_t chunk_rows = 65536) const;
  /// `events` (as events() read them) and every metric row, merged in the order they
  /// happened (sequence numbers): what resume and `export --table replay` walk.
  /// From `from_seq` on: the rows before it are not read (a resume from a snapshot).
  void for_each_in_seq_order(const std::vector<EventRecord>& events,
                             const std::function<void(const EventRecord&)>& on_event,
                             const std::function<void(const MetricRecord&)>& on_metric,
                             std::uint64_t from_seq = 0) const;
  std::vector<CheckpointRecord> checkpoints() const;
  /// What [checkpoints] removed, in the order it did (empty before schema 10).
  std::vector<RemovedCheckpoint> removed_checkpoints() const;
  std::vector<SessionRecord> sessions() const;
  /// PBT's exploits in the order they happened (empty before schema 3).
  std::vector<ExploitRecord> exploits() const;
  /// The configuration `trial` had when it made its best report: /trials' unless PBT
  /// changed it before then (the last exploit of the trial before that report).
  core::Configuration config_at_best(const TrialRecord& trial) const;
  /// The decision snapshots the file holds (/snapshots; store/decision_replay.hpp), by
  /// slot, as written: unchecked, and none in a file no writer with snapshots opened.
  std::vector<std::pair<int, std::string>> decision_snapshots() const;

 private:
  void read_header();  // format, schema version, embedded study, commit row
  /// Opens table `name`, checked to be rows of `layout`'s fields (a tampered or foreign
  /// file is refused by name instead of read as zeros).
  Hid dataset(const char* name, const RowLayout& layout) const;
  /// Rows [first, first + count) of dataset `name`; a failed read is reported as a
  /// corrupted results file naming the dataset and the rows.
  std::vector<std::byte> read_rows(const Hid& d, const char* name, const RowLayout& layout,
                                   std::uint64_t first, std::uint64_t count) const;
  void read_commit();
  EventRecord decode_event(const std::byte* row) const;
  template <class Record, class Decode>
  std::vector<Record> read_all(const char* name, std::uint64_t committed, const RowLayout& layout,
                               Decode decode) const;

  std::string path_;
  std::unique_ptr<Hid> file_;
  std::int64_t schema_version_ = 0;
  core::StudySpec spec_;
  std::unique_ptr<StudyLayout> layout_;
  CommittedCounts committed_;
};

// The write-ahead log (store/file/commit_log.hpp), as a reader may ask of it.

/// The log's first segment: "/abs/study.h5-wal" for "study.h5".
std::string write_ahead_log_path(const std::string& results_file);
/// How many metric rows `results_file` holds once its write-ahead log is applied: the
/// most any logged record brings it to; nullopt when neither segment holds a record.
/// A reader compares it with the file's own count to tell the reports only the log has
/// (an InputError names a segment that is not a slurmtune log).
std::optional<std::uint64_t> logged_metric_rows(const std::string& results_file);

}  // namespace slurmtune::store
