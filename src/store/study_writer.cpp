#include "store/study_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>

#include "config/study_file.hpp"
#include "core/text.hpp"
#include "slurmtune/version.hpp"
#include "store/decision_snapshots.hpp"
#include "store/file/commit_log.hpp"
#include "store/file/flush_thread.hpp"
#include "store/file/hdf5.hpp"
#include "store/file/tables.hpp"
#include "store/study_writer_objects.hpp"

namespace slurmtune::store {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

Hid swmr_file_access() {
  Hid fapl = check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  check_status(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST),
               "H5Pset_libver_bounds");
  return fapl;
}

InputError already_exists(const std::string& path) {
  return InputError(path +
                    ": already exists; slurmtune never overwrites a results file. "
                    "Resume it, or choose another path");
}

// A hidden sibling of `path` that no other living process uses (the folder may be shared
// by several hosts): ".NAME.HOST.PID.unpublished".
std::string unpublished_name(const std::string& path) {
  const std::filesystem::path p(path);
  std::string name = p.filename().string();  // appended, not `"." + ...`: g++ 12's -Wrestrict
  name.insert(0, 1, '.');
  name.append(".").append(host_name()).append(".").append(std::to_string(getpid()));
  return (p.parent_path() / name.append(".unpublished")).string();
}

// The unpublished name goes when create() returns or throws; the published one stays.
struct UnlinkOnExit {
  std::string path;
  explicit UnlinkOnExit(std::string p) : path(std::move(p)) {}
  UnlinkOnExit(const UnlinkOnExit&) = delete;
  UnlinkOnExit& operator=(const UnlinkOnExit&) = delete;
  ~UnlinkOnExit() { unlink(path.c_str()); }
};

void publish(const std::string& unpublished, const std::string& path) {
  if (link(unpublished.c_str(), path.c_str()) == 0) return;
  int error = errno;
  if (error == EEXIST) throw already_exists(path);
  // A file system without hard links: a rename, which replaces, after a last look.
  if (error == EPERM || error == EOPNOTSUPP || error == ENOSYS) {
    if (std::filesystem::exists(path)) throw already_exists(path);
    if (std::rename(unpublished.c_str(), path.c_str()) == 0) return;
    error = errno;
  }
  throw InputError(path + ": cannot create the results file: " + std::strerror(error));
}

// A resumed file keeps the schema it was created with.
std::int64_t schema_of(const Hid& file) {
  return read_int_attribute(file, "schema_version").value_or(1);
}

// A trial's error as its 512-byte cell keeps it: the first line (what failed: the exit
// status) and the end of the rest (where it failed: Python prints its exception last).
std::string error_cell(const std::string& error) {
  return core::fit_utf8_head_and_end(error, kErrorBytes);
}

}  // namespace

std::string iso8601_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

double unix_time_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::uint64_t StudyWriter::metric_rows() const {
  return h5_->metrics->rows();
}

StudyWriter::StudyWriter(Hid file, const core::StudySpec& spec, const WriterOptions& options,
                         bool fresh)
    : h5_(std::make_unique<Hdf5Objects>(std::move(file))),
      layout_(spec, fresh ? options.schema_version : schema_of(h5_->file)),
      mode_(spec.mode),
      metric_names_(spec.metrics),
      constraints_(spec.constraints),
      options_(options),
      last_flush_(std::chrono::steady_clock::now()) {
  if (fresh) write_root_attributes(spec);
  open_tables(fresh);
}

std::unique_ptr<StudyWriter> StudyWriter::create(const std::string& path,
                                                 const core::StudySpec& spec,
                                                 const WriterOptions& options) {
  quiet_hdf5_errors();
  if (std::filesystem::exists(path)) throw already_exists(path);
  // Laid out under a name of this process's own and published whole by link(): a writer
  // killed before its first flush leaves no half-made file at `path`, which a rerun would
  // take for a study to resume and could not open.
  const std::string unpublished = unpublished_name(path);
  unlink(unpublished.c_str());  // a dead process's of this name: this PID was its
  const Hid fapl = swmr_file_access();
  // Before the create: HDF5 makes the file before it locks it, and a refused lock leaves it.
  const UnlinkOnExit unpublished_file{unpublished};
  Hid file = check_file(H5Fcreate(unpublished.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl),
                        "H5Fcreate " + unpublished, path);
  auto writer = std::unique_ptr<StudyWriter>(new StudyWriter(std::move(file), spec, options, true));
  // From here on HDF5 1.10 cannot create objects: the layout above is complete.
  check_status(H5Fstart_swmr_write(writer->h5_->file), "H5Fstart_swmr_write " + path);
  writer->restore_chunk_caches();
  writer->append_session();
  writer->flush();
  publish(unpublished, path);  // fails, never replaces, where `path` appeared meanwhile
  writer->start_flushing(path);
  return writer;
}

static_assert(WriterOptions{}.lock_wait_s == kFileLockWaitS);

Hid StudyWriter::open_existing(const std::string& path, double lock_wait_s) {
  quiet_hdf5_errors();
  const Hid fapl = swmr_file_access();
  // A writer killed while in SWMR mode leaves the file marked "open for writing";
  // this is what `h5clear -s` does, and the caller asked to resume this very file.
  hbool_t clear = 1;
  check_status(H5Pset(fapl, "clear_status_flags", &clear), "H5Pset clear_status_flags");
  Hid file = open_file([&] { return H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl); }, "H5Fopen " + path,
                       path, lock_wait_s);
  // A SWMR writer does not keep the superblock's end-of-allocation up to date; after a
  // crash it lags behind objects that were written (`h5clear --increment` does this).
  check_status(H5Fincrement_filesize(file, 0), "H5Fincrement_filesize " + path);
  return file;
}

std::unique_ptr<StudyWriter> StudyWriter::reopen(const std::string& path,
                                                 const core::StudySpec& spec,
                                                 const WriterOptions& options,
                                                 const WriterPosition& position) {
  auto writer = std::unique_ptr<StudyWriter>(
      new StudyWriter(open_existing(path, options.lock_wait_s), spec, options, false));
  writer->seq_ = position.next_seq;
  writer->adopt_live_trials(position);
  check_status(H5Fstart_swmr_write(writer->h5_->file), "H5Fstart_swmr_write " + path);
  writer->restore_chunk_caches();
  writer->append_session();
  writer->flush();
  writer->start_flushing(path);
  return writer;
}

void StudyWriter::start_flushing(const std::string& path) {
  if (!options_.background_flush) return;
  flusher_ = std::make_unique<FlushThread>();
  // Its base: the commit just made. A log left by a writer before (apply_log took it in)
  // is replaced.
  if (options_.write_ahead_log) log_ = std::make_unique<CommitLog>(path, handed_commit_);
}

StudyWriter::~StudyWriter() {
  if (!final_flush_) return;
  try {
    if (snapshots_) snapshots_->snapshot_next();  // the next resume replays nothing
    flush();
    if (log_) log_->remove();  // the file has every row
  } catch (const std::exception& e) {
    std::fprintf(stderr, "slurmtune: warning: final flush of the results file failed: %s\n",
                 e.what());
  }
}

void StudyWriter::write_root_attributes(const core::StudySpec& spec) {
  write_string_attribute(h5_->file, "format", kFormatName);
  write_int_attribute(h5_->file, "schema_version", options_.schema_version);
  write_string_attribute(h5_->file, "slurmtune_version", kVersion);
  write_string_attribute(h5_->file, "study_name", spec.name);
  write_string_attribute(h5_->file, "created", iso8601_now());
  write_string_attribute(h5_->file, "metric", spec.metric);
  write_strings_attribute(h5_->file, "metrics", spec.metrics);
  write_string_attribute(h5_->file, "mode", spec.mode == core::Mode::Min ? "min" : "max");
  if (options_.schema_version >= 7) {
    std::vector<std::string> objectives, modes, constraints;
    for (const auto& o : spec.objectives) {
      objectives.push_back(o.metric);
      modes.emplace_back(o.mode == core::Mode::Min ? "min" : "max");
    }
    for (const auto& c : spec.constraints)
      constraints.push_back(c.text());
    write_strings_attribute(h5_->file, "objectives", objectives);
    write_strings_attribute(h5_->file, "modes", modes);
    if (!constraints.empty())  // an empty list is no attribute: readers take none
      write_strings_attribute(h5_->file, "constraints", constraints);
  }
  write_string_attribute(h5_->file, "resource", spec.scheduler.resource);
  write_int_attribute(h5_->file, "seed", static_cast<std::int64_t>(spec.seed));
  write_string_attribute(h5_->file, "sampler",
                         std::string(core::sampler_keyword(spec.sampler.kind)));
  write_string_attribute(h5_->file, "sampler_options", config::sampler_options_json(spec));
  write_string_attribute(h5_->file, "study_file", spec.text);
  // What actually ran, defaults and command-line overrides included: resume compares
  // against this, not against the text above.
  write_string_attribute(h5_->file, "resolved_study", config::to_toml(spec));
  write_string_attribute(h5_->file, "study_file_path", spec.path);
  write_string_attribute(h5_->file, "clock", options_.virtual_clock ? "virtual" : "unix");
  write_string_attribute(h5_->file, "host", host_name());
  write_string_attribute(h5_->file, "slurm_job_id", env_or_empty("SLURM_JOB_ID"));
}

void StudyWriter::append_session() {
  session_first_seq_ = seq_;
  std::byte* row = h5_->sessions->new_row();
  const auto& l = layout_.sessions;
  l.put_f64(row, layout_.s.started, unix_time_s());
  l.put_string(row, layout_.s.host, host_name());
  l.put_string(row, layout_.s.slurm_job_id, env_or_empty("SLURM_JOB_ID"));
  l.put_string(row, layout_.s.version, kVersion);
  l.put_u64(row, layout_.s.first_seq, seq_);
}

std::byte* StudyWriter::live_row(core::TrialId trial) {
  if (!h5_->trials->is_live(trial))
    throw UsageError("results file: trial " + std::to_string(trial) +
                     " is not running (never started, or already ended)");
  return h5_->trials->row(trial);
}

bool StudyWriter::better(double a, double b) const {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return mode_ == core::Mode::Min ? a < b : a > b;
}

void StudyWriter::event(core::TrialId trial, EventKind kind, double time,
                        const core::ReportOutcome* outcome, double step, double value) {
  std::byte* row = h5_->events->new_row();
  const auto& l = layout_.events;
  l.put_u64(row, layout_.e.seq, seq_++);
  l.put_f64(row, layout_.e.time, time);
  l.put_u64(row, layout_.e.trial, trial);
  l.put_enum(row, layout_.e.kind, static_cast<std::uint8_t>(kind));
  l.put_i32(row, layout_.e.rung, outcome && outcome->rung ? *outcome->rung : -1);
  l.put_f64(row, layout_.e.step, step);
  l.put_f64(row, layout_.e.milestone, outcome && outcome->milestone ? *outcome->milestone : kNaN);
  l.put_f64(row, layout_.e.value, value);
  l.put_f64(row, layout_.e.cutoff, outcome && outcome->cutoff ? *outcome->cutoff : kNaN);
  if (snapshots_) {
    // What a reader decodes from the row (a replay reads no more than this).
    EventRecord e;
    e.seq = seq_ - 1;
    e.trial = trial;
    e.time = time;
    e.kind = kind;
    e.step = step;
    e.value = value;
    snapshots_->event(e);
  }
  if (!layout_.has_predictions()) return;  // a file of schema 4 or older
  const auto& p = outcome ? outcome->prediction : std::nullopt;
  l.put_f64(row, layout_.e.predicted_at, p ? p->at : kNaN);
  l.put_f64(row, layout_.e.predicted_mean, p ? p->mean : kNaN);
  l.put_f64(row, layout_.e.predicted_lower, p ? p->lower : kNaN);
  l.put_f64(row, layout_.e.predicted_upper, p ? p->upper : kNaN);
}

void StudyWriter::trial_started(core::TrialId trial, const core::Configuration& config, int bracket,
                                double time, const core::SuggestionInfo& suggestion) {
  if (h5_->trials->is_live(trial))
    throw UsageError("results file: trial " + std::to_string(trial) + " started twice");
  if (snapshots_) snapshots_->started(trial, config);
  std::byte* row = h5_->trials->row(trial);
  const auto& l = layout_.trials;
  l.put_u64(row, layout_.t.id, trial);
  l.put_enum(row, layout_.t.status, static_cast<std::uint8_t>(TrialStatus::Running));
  l.put_i32(row, layout_.t.bracket, bracket);
  l.put_i32(row, layout_.t.rung, -1);
  l.put_f64(row, layout_.t.start_time, time);
  for (const std::size_t f : {layout_.t.end_time, layout_.t.last_step, layout_.t.last_value,
                              layout_.t.best_value, layout_.t.best_step})
    l.put_f64(row, f, kNaN);
  if (layout_.t.last_time != StudyLayout::kAbsent) l.put_f64(row, layout_.t.last_time, kNaN);
  for (std::size_t p = 0; p < config.values.size() && p < layout_.params.size(); ++p) {
    put_param(layout_, l, layout_.t.first_param, row, p, config.values[p]);
    if (layout_.t.active[p] != StudyLayout::kAbsent)
      l.put_enum(row, layout_.t.active[p], config.is_active(p) ? 1 : 0);
  }
  for (const std::size_t f : layout_.t.constraints)  // not reported yet: not feasible
    l.put_f64(row, f, kNaN);
  for (const std::size_t f : layout_.t.objectives)
    l.put_f64(row, f, kNaN);
  if (layout_.t.feasible != StudyLayout::kAbsent) l.put_enum(row, layout_.t.feasible, 0);
  if (layout_.has_suggestions()) {
    l.put_enum(row, layout_.t.origin, static_cast<std::uint8_t>(suggestion.origin));
    l.put_u64(row, layout_.t.sampler_words, suggestion.position.model_words);
    l.put_u64(row, layout_.t.startup_words, suggestion.position.startup_words);
  }
  event(trial, EventKind::Start, time, nullptr, kNaN, kNaN);
  flush_after_row();
}

void StudyWriter::mark_standing(std::byte* row, std::span<const double> values) {
  const auto& tl = layout_.trials;
  for (std::size_t k = 0; k < layout_.t.objectives.size(); ++k) {
    const std::size_t column = layout_.objective_metrics[k];
    if (column < values.size() && !std::isnan(values[column]))
      tl.put_f64(row, layout_.t.objectives[k], values[column]);
  }
  mark_constraints(row, values);
}

void StudyWriter::mark_constraints(std::byte* row, std::span<const double> values) {
  if (layout_.t.feasible == StudyLayout::kAbsent) return;
  const auto& tl = layout_.trials;
  bool feasible = true;
  for (std::size_t k = 0; k < layout_.t.constraints.size(); ++k) {
    const std::size_t column = layout_.constraint_metrics[k];
    if (column < values.size() && !std::isnan(values[column]))
      tl.put_f64(row, layout_.t.constraints[k], constraints_[k].value(values[column]));
    feasible = feasible && tl.get<double>(row, layout_.t.constraints[k]) <= 0;  // NaN: no
  }
  tl.put_enum(row, layout_.t.feasible, feasible ? 1 : 0);
}

void StudyWriter::improved(std::uint64_t seq, core::TrialId trial, double time, double value) {
  study_best_ = value;
  std::byte* row = h5_->improvements->new_row();
  const auto& l = layout_.improvements;
  l.put_u64(row, layout_.i.seq, seq);
  l.put_u64(row, layout_.i.trial, trial);
  l.put_f64(row, layout_.i.time, time);
  l.put_f64(row, layout_.i.value, value);
}

void StudyWriter::trial_resumed(core::TrialId trial, double time, const core::ResumeReason* why) {
  std::byte* row = live_row(trial);
  layout_.trials.put_enum(row, layout_.t.status, static_cast<std::uint8_t>(TrialStatus::Running));
  const double step = layout_.trials.get<double>(row, layout_.t.last_step);
  if (!why) {
    event(trial, EventKind::Resume, time, nullptr, step, kNaN);
  } else {
    core::ReportOutcome reason;
    reason.milestone = why->until;
    reason.prediction = why->expected;
    const bool model = why->rule == core::ResumeReason::Rule::Model;
    if (model) reason.cutoff = why->start_improvement;
    event(trial, EventKind::Resume, time, &reason, step, model ? why->improvement : kNaN);
  }
  flush_after_row();
}

void StudyWriter::report(core::TrialId trial, double step, double time,
                         std::span<const double> values, const core::ReportOutcome& outcome) {
  std::byte* row = live_row(trial);
  const double value = values.empty() ? kNaN : values[0];
  std::byte* m = h5_->metrics->new_row();
  const auto& ml = layout_.metrics;
  const std::uint64_t seq = seq_++;
  ml.put_u64(m, layout_.m.seq, seq);
  ml.put_u64(m, layout_.m.trial, trial);
  ml.put_f64(m, layout_.m.step, step);
  ml.put_f64(m, layout_.m.time, time);
  for (std::size_t i = 0; i < metric_names_.size(); ++i)
    ml.put_f64(m, layout_.m.first_metric + i, i < values.size() ? values[i] : kNaN);
  if (snapshots_) snapshots_->report(seq, trial, step, time, values);

  const auto& tl = layout_.trials;
  const auto index = tl.get<std::uint64_t>(row, layout_.t.reports);  // of this report
  tl.put_f64(row, layout_.t.last_step, step);
  tl.put_f64(row, layout_.t.last_value, value);
  tl.put_u64(row, layout_.t.reports, index + 1);
  if (h5_->curves) {
    tl.put_f64(row, layout_.t.last_time, time);
    h5_->curves->report(trial, index, step, value);
    if (better(value, study_best_)) improved(seq, trial, time, value);
  }
  if (better(value, tl.get<double>(row, layout_.t.best_value))) {
    tl.put_f64(row, layout_.t.best_value, value);
    tl.put_f64(row, layout_.t.best_step, step);
    if (layout_.t.best_seq != StudyLayout::kAbsent) tl.put_u64(row, layout_.t.best_seq, seq);
  }
  if (outcome.rung) tl.put_i32(row, layout_.t.rung, *outcome.rung);
  mark_standing(row, values);
  // Only decisions worth explaining become events: a judgement at a rung, or anything
  // but a plain "continue".
  if (outcome.rung || outcome.decision != core::SchedulerDecision::Continue) {
    // An exploited trial (PBT) waits paused for its resumption.
    const bool waits = outcome.decision == core::SchedulerDecision::Pause ||
                       outcome.decision == core::SchedulerDecision::Exploit;
    const EventKind kind = outcome.decision == core::SchedulerDecision::Stop ? EventKind::Stop
                           : waits                                           ? EventKind::Pause
                                                                             : EventKind::Continue;
    event(trial, kind, time, &outcome, step, value);
    if (kind == EventKind::Pause)
      tl.put_enum(row, layout_.t.status, static_cast<std::uint8_t>(TrialStatus::Paused));
  }
  flush_after_row();
}

void StudyWriter::report_named(core::TrialId trial, double step, double time,
                               const std::vector<std::pair<std::string, double>>& metrics,
                               const core::ReportOutcome& outcome) {
  std::vector<double> values(metric_names_.size(), kNaN);
  for (const auto& [name, value] : metrics) {
    const auto it = std::find(metric_names_.begin(), metric_names_.end(), name);
    if (it == metric_names_.end())
      throw InputError("trial " + std::to_string(trial) + " reported metric '" + name +
                       "', which the study does not declare; add it to [study] metrics");
    values[static_cast<std::size_t>(it - metric_names_.begin())] = value;
  }
  report(trial, step, time, values, outcome);
}

void StudyWriter::trial_ended(core::TrialId trial, core::TrialEnd how, double time,
                              const std::string& error) {
  std::byte* row = live_row(trial);
  const auto& l = layout_.trials;
  const TrialStatus status = end_status(how);
  l.put_enum(row, layout_.t.status, static_cast<std::uint8_t>(status));
  l.put_f64(row, layout_.t.end_time, time);
  if (!error.empty()) l.put_string(row, layout_.t.error, error_cell(error));
  const EventKind kind = end_event(how);
  event(trial, kind, time, nullptr, l.get<double>(row, layout_.t.last_step),
        l.get<double>(row, layout_.t.last_value));
  h5_->trials->retire(trial);
  if (h5_->curves) h5_->curves->retire(trial);
  flush_after_row();
}

void StudyWriter::trial_retried(core::TrialId trial, double time, const std::string& error) {
  std::byte* row = live_row(trial);
  const auto& l = layout_.trials;
  l.put_i32(row, layout_.t.retries, l.get<std::int32_t>(row, layout_.t.retries) + 1);
  l.put_string(row, layout_.t.error, error_cell(error));
  event(trial, EventKind::Retry, time, nullptr, l.get<double>(row, layout_.t.last_step),
        l.get<double>(row, layout_.t.last_value));
  flush_after_row();
}

void StudyWriter::trial_reopened(core::TrialId trial, double time) {
  if (!layout_.has_reopens())
    throw UsageError("results file: trial " + std::to_string(trial) +
                     " cannot be reopened in a file of schema " +
                     std::to_string(schema_of(h5_->file)) + " (reopening came with schema 8)");
  std::byte* row = live_row(trial);
  const auto& l = layout_.trials;
  l.put_enum(row, layout_.t.status, static_cast<std::uint8_t>(TrialStatus::Paused));
  l.put_f64(row, layout_.t.end_time, kNaN);
  l.put_string(row, layout_.t.error, "");
  event(trial, EventKind::Reopen, time, nullptr, l.get<double>(row, layout_.t.last_step),
        l.get<double>(row, layout_.t.last_value));
  flush_after_row();
}

void StudyWriter::admissions_closed(double time) {
  event(0, EventKind::Closed, time, nullptr, kNaN, kNaN);
  flush_after_row();
}

void StudyWriter::set_nodes(core::TrialId trial, const std::string& nodes) {
  layout_.trials.put_string(live_row(trial), layout_.t.nodes, nodes);
}

void StudyWriter::checkpoint(core::TrialId trial, double step, double time,
                             const std::string& relative_path, std::uint64_t bytes) {
  if (relative_path.size() > max_checkpoint_path())
    throw InputError("checkpoint path of trial " + std::to_string(trial) + " has " +
                     std::to_string(relative_path.size()) +
                     " bytes; this results file stores at most " +
                     std::to_string(max_checkpoint_path()));
  std::byte* row = h5_->checkpoints->new_row();
  const auto& l = layout_.checkpoints;
  l.put_u64(row, layout_.c.trial, trial);
  l.put_f64(row, layout_.c.step, step);
  l.put_f64(row, layout_.c.time, time);
  l.put_u64(row, layout_.c.size, bytes);
  l.put_string(row, layout_.c.path, relative_path);
  flush_after_row();
}

void StudyWriter::checkpoint_removed(const core::CheckpointRemoval& removal, double time) {
  if (!h5_->removals) return;
  std::byte* row = h5_->removals->new_row();
  const auto& l = layout_.removals;
  l.put_u64(row, layout_.r.trial, removal.trial);
  l.put_f64(row, layout_.r.step, removal.step);
  l.put_f64(row, layout_.r.time, time);
  l.put_u64(row, layout_.r.size, removal.bytes);
  l.put_string(row, layout_.r.path, removal.path);
  l.put_enum(row, layout_.r.reason, static_cast<std::uint8_t>(removal.reason));
  flush_after_row();
}

double StudyWriter::best_value(core::TrialId trial) const {
  if (!h5_->trials->is_live(trial)) return kNaN;
  return layout_.trials.get<double>(h5_->trials->row(trial), layout_.t.best_value);
}

std::size_t StudyWriter::max_checkpoint_path() const {
  return layout_.checkpoints.fields()[layout_.c.path].size - 1;
}

void StudyWriter::checkpoint_saved(core::TrialId trial, double step, double time) {
  event(trial, EventKind::Checkpoint, time, nullptr, step, kNaN);
  flush_after_row();
}

void StudyWriter::trial_exploited(core::TrialId trial, const core::Exploit& exploit, double time) {
  if (!h5_->exploits)
    throw UsageError(
        "results file: written before schema 3, it has no /exploits; a pbt study "
        "needs a new file");
  std::byte* row = h5_->exploits->new_row();
  const auto& l = layout_.exploits;
  l.put_u64(row, layout_.x.seq, seq_++);
  l.put_f64(row, layout_.x.time, time);
  l.put_u64(row, layout_.x.trial, trial);
  l.put_f64(row, layout_.x.step, exploit.step);
  l.put_u64(row, layout_.x.donor, exploit.donor);
  l.put_f64(row, layout_.x.donor_step, exploit.donor_step);
  l.put_string(row, layout_.x.operations, exploit.operations);
  for (std::size_t p = 0; p < exploit.config.values.size() && p < layout_.params.size(); ++p)
    put_param(layout_, l, layout_.x.first_param, row, p, exploit.config.values[p]);
  flush_after_row();
}

}  // namespace slurmtune::store
