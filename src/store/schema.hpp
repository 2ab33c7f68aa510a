#pragma once
// The results file's layout (doc/hdf5-layout.md is the public description).
// The schema version is independent of slurmtune's version: it changes only when a
// reader of the previous schema could no longer read the file.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/search/suggester.hpp"
#include "core/space/search_space.hpp"
#include "core/study/loop_figures.hpp"
#include "core/study/study_spec.hpp"
#include "store/file/row_layout.hpp"

namespace slurmtune::store {

inline constexpr const char* kFormatName = "slurmtune-study";
/// 2: /trials records how each configuration was suggested (origin, sampler streams).
/// 3: /exploits records PBT's exploits (a trial's configuration changes mid-run).
/// 4: /checkpoints.path holds whole paths (PATH_MAX bytes, was 256).
/// 5: /events records where a predicting scheduler expects the trial to end
///    (predicted_at, predicted_mean, predicted_lower, predicted_upper).
/// 6: /trials.origin gains `enqueued` (a configuration given by [[enqueue]]), and each
///    conditional parameter an `active/<name>` column (its `config/<name>` means nothing
///    where that is FALSE).
/// 7: root attributes `objectives` and `modes` (one per objective: a study of several
///    objectives has a Pareto front) and `constraints` (as written, "mem_gb <= 40"); with
///    constraints, /trials gains `constraint/<text>` and `feasible` columns.
/// 8: /events can say `reopen`.
/// 9: /commit records the coordinator loop's stalls (the `loop_*` fields).
/// 10: /trials gains `objective/<metric>` per objective (its last reported value) and
///    `best_seq` (the sequence number of the best report), so that readers take each
///    trial's standing and its configuration at its best from /trials, not /metrics;
///    /removed_checkpoints records the checkpoints [checkpoints] removed.
/// 11: /curves keeps each trial's learning curve thinned to at most kCurveSlots points,
///    /improvements each report that bettered the study's best so far, and /trials
///    `last_time`: the dashboard and the HTML page draw from them, not from /metrics.
inline constexpr std::int64_t kSchemaVersion = 11;

/// Bytes of /checkpoints.path before schema 4, and from schema 4 on (Linux's PATH_MAX):
/// a checkpoint path must fit with its terminating NUL, or it is refused when saved.
inline constexpr std::size_t kShortPathBytes = 256;
inline constexpr std::size_t kPathBytes = 4096;
/// /trials error: a failed trial's error (the exit status and the end of its stderr).
inline constexpr std::size_t kErrorBytes = 512;

/// Reserved column names of /metrics; a metric may not use them.
inline const std::vector<std::string> kReservedMetricNames = {"seq", "trial", "step", "time"};

enum class TrialStatus : std::uint8_t { Pending, Running, Paused, Completed, Stopped, Failed };
const std::vector<std::string>& trial_status_names();
/// Enum names of /trials' origin column (core::SuggestionOrigin).
const std::vector<std::string>& suggestion_origin_names();

/// What an /events row records: the start of a trial, a scheduler decision at a rung,
/// the end of a trial.
enum class EventKind : std::uint8_t {
  Start,       ///< a new trial began
  Resume,      ///< a paused trial was resumed (promotion)
  Continue,    ///< judged at a rung and kept
  Pause,       ///< paused at a rung (promotion schedulers)
  Stop,        ///< the scheduler stopped it
  Completed,   ///< the trial ended having run its course
  Stopped,     ///< the trial ended early (stopped, dropped, budget)
  Failed,      ///< the trial ended with an error
  Closed,      ///< no further trial will start (trial column unused); schedulers react to it
  Retry,       ///< an attempt failed; the trial runs again (the scheduler is not told)
  Checkpoint,  ///< a checkpoint the scheduler asked for was saved (PBT may clone it), schema 3 on
  Reopen,      ///< a trial dropped when the study ended waits at its rung again, schema 8 on
};
/// The /events kinds of a file of `schema_version` (older files lack the newer ones).
std::vector<std::string> event_kind_names(std::int64_t schema_version = kSchemaVersion);
/// The name of one /events kind ("reopen").
const std::string& event_kind_name(EventKind kind);

/// The status and the /events kind of a trial that ended `how`, and the way back.
TrialStatus end_status(core::TrialEnd how);
EventKind end_event(core::TrialEnd how);
std::optional<core::TrialEnd> trial_end_of(EventKind kind);

/// How one hyperparameter is stored in /trials (column "config/<name>").
struct ParamColumn {
  enum class Kind { Real, Integer, Bool, Category, Text } kind;
  std::vector<std::string> categories;   ///< Category: enum member names
  std::size_t text_size = 0;             ///< Text: fixed string length
  std::vector<core::ParamValue> values;  ///< Text: the domain's values, to restore their types
};
ParamColumn param_column(const core::Domain& domain);

/// Row layouts of every dataset plus the field indices the writer and reader use.
struct StudyLayout {
  /// The layout of a file of `schema_version` (older files lack newer columns).
  explicit StudyLayout(const core::StudySpec& spec, std::int64_t schema_version = kSchemaVersion);
  /// Schema 2 on: /trials has the suggestion columns.
  bool has_suggestions() const { return t.origin != kAbsent; }
  /// Schema 3 on: the file has /exploits.
  bool has_exploits() const { return k.exploits != kAbsent; }
  bool has_predictions() const { return e.predicted_mean != kAbsent; }
  /// Schema 8 on: /events can say `reopen`.
  bool has_reopens() const { return reopens; }
  /// Schema 9 on: /commit records the coordinator loop's figures.
  bool has_loop_figures() const { return k.loop_turns != kAbsent; }
  /// Schema 10 on: /trials keeps each objective's last reported value.
  bool has_objective_columns() const { return !t.objectives.empty(); }
  /// Schema 10 on: the file has /removed_checkpoints.
  bool has_removals() const { return k.removals != kAbsent; }
  /// Schema 11 on: the file has /curves and /improvements, /trials `last_time`.
  bool has_curves() const { return k.improvements != kAbsent; }
  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

  RowLayout trials, metrics, events, checkpoints, sessions, commit, exploits, removals,
      improvements;
  std::vector<ParamColumn> params;

  struct {
    std::size_t id, status, bracket, rung, retries, start_time, end_time, last_step, last_value,
        best_value, best_step, reports, nodes, error, first_param;
    std::size_t origin = kAbsent, sampler_words = kAbsent, startup_words = kAbsent;
    /// Per parameter: its `active/<name>` field, kAbsent for an unconditional one.
    std::vector<std::size_t> active;
    /// Schema 7, a study with constraints: per constraint its `constraint/<text>` field
    /// (its value at the trial's last report of the metric), and `feasible`.
    std::vector<std::size_t> constraints;
    std::size_t feasible = kAbsent;
    /// Schema 10: per objective its `objective/<metric>` field (the last value reported),
    /// and `best_seq` (the /metrics seq of the report of best_value).
    std::vector<std::size_t> objectives;
    std::size_t best_seq = kAbsent;
    /// Schema 11: when the trial last reported.
    std::size_t last_time = kAbsent;
  } t;
  /// Per constraint, its metric's column in /metrics (first_metric + this).
  std::vector<std::size_t> constraint_metrics;
  /// Schema 10: per objective, its metric's column in /metrics (first_metric + this).
  std::vector<std::size_t> objective_metrics;
  struct {
    std::size_t seq, trial, step, time, first_metric;
  } m;
  struct {
    std::size_t seq, time, trial, kind, rung, step, milestone, value, cutoff;
    std::size_t predicted_at = kAbsent, predicted_mean = kAbsent, predicted_lower = kAbsent,
                predicted_upper = kAbsent;
  } e;
  struct {
    std::size_t trial, step, time, size, path;
  } c;
  struct {
    std::size_t started, host, slurm_job_id, version, first_seq;
  } s;
  // /exploits (PBT): trial, exploited at its `step`, continues from donor's checkpoint at
  // donor_step, with the configuration in its config/<name> columns.
  struct {
    std::size_t seq, time, trial, step, donor, donor_step, operations, first_param;
  } x;
  // /removed_checkpoints (schema 10): a checkpoint of /checkpoints that [checkpoints]
  // removed, when, and why (core::CheckpointRemoval::Reason).
  struct {
    std::size_t trial, step, time, size, path, reason;
  } r;
  // /improvements (schema 11): a report that bettered the best value of the study's
  // metric so far (any trial's, failed ones too: the best-so-far line).
  struct {
    std::size_t seq, trial, time, value;
  } i;
  // /commit: one row, rewritten after every flush. Rows beyond these counts were
  // written by a flush that did not finish (the writer died in it): readers and resume
  // ignore them, and a resumed writer overwrites them.
  struct {
    std::size_t next_seq, trials, metrics, events, checkpoints, sessions, time;
    std::size_t exploits = kAbsent;
    std::size_t removals = kAbsent;      ///< schema 10 on
    std::size_t improvements = kAbsent;  ///< schema 11 on
    /// Schema 9 on: the loop's figures (core::LoopFigures), in its order.
    std::size_t loop_recent_ms = kAbsent, loop_recent_work = kAbsent, loop_recent_busy = kAbsent,
                loop_longest_ms = kAbsent, loop_longest_work = kAbsent, loop_turns = kAbsent,
                loop_over_10ms = kAbsent, loop_over_100ms = kAbsent, loop_over_1s = kAbsent;
  } k;
  bool reopens = false;
};

/// Writes a parameter value into its config/<name> column of `table` (/trials or
/// /exploits, whose columns start at `first`) and reads it back.
void put_param(const StudyLayout& layout, const RowLayout& table, std::size_t first, std::byte* row,
               std::size_t param, const core::ParamValue& value);
core::ParamValue get_param(const StudyLayout& layout, const RowLayout& table, std::size_t first,
                           const std::byte* row, std::size_t param);

/// Writes the loop's figures into a /commit row and reads them back (schema 9 on); a
/// work code this version does not know reads as `periodic`.
void put_loop_figures(const StudyLayout& layout, std::byte* commit_row,
                      const core::LoopFigures& figures);
core::LoopFigures get_loop_figures(const StudyLayout& layout, const std::byte* commit_row);

}  // namespace slurmtune::store
