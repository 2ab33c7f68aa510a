#include "store/study_reader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "config/study_file.hpp"
#include "core/input_file.hpp"
#include "store/decision_replay.hpp"
#include "store/file/commit_log.hpp"
#include "store/file/hdf5.hpp"
#include "store/file/snapshot_slots.hpp"
#include "store/file/tables.hpp"

namespace slurmtune::store {
namespace {

// A SWMR reader re-reads metadata whose checksum fails (the writer may be mid-flush),
// sleeping 1 ns, 2 ns, 4 ns, ... between attempts. HDF5's default of 100 attempts makes
// a corrupted file look like a hang (2^100 ns); 26 attempts bound one object's retries to
// about 67 ms of sleep, ample for a flush in progress.
constexpr unsigned kSwmrReadAttempts = 26;

Hid swmr_read_access() {
  Hid fapl = check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  check_status(H5Pset_metadata_read_attempts(fapl, kSwmrReadAttempts),
               "H5Pset_metadata_read_attempts");
  return fapl;
}

// Without a writer a file is opened plainly: a checksum failure is then an error at
// once. A file a writer holds (or one a killed writer left marked as open for writing)
// refuses that, and is opened for SWMR reading instead, with bounded retries.
Hid open_for_reading(const std::string& path) {
  quiet_hdf5_errors();
  if (!std::filesystem::exists(path)) throw ResultsFileFormatError(path + ": no such file");
  core::require_regular_file(path, "a results file");
  const htri_t hdf5 = H5Fis_hdf5(path.c_str());
  H5Eclear2(H5E_DEFAULT);
  if (hdf5 <= 0)
    throw ResultsFileFormatError(path +
                                 ": not an HDF5 file (no HDF5 signature); a results file is "
                                 "what `slurmtune run` or `slurmtune simulate -o` writes");
  const Hid fapl = swmr_read_access();
  // A writer holds the file's lock while it opens it (until SWMR mode starts): wait.
  LockWait lock_wait;
  std::string stack;
  do {
    if (const hid_t plain = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT); plain >= 0)
      return Hid(plain);
    const std::string plain_error = error_stack_text();
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl);
    if (file >= 0) return Hid(file);
    stack = plain_error + "; as a SWMR reader: " + error_stack_text();
  } while (lock_wait.again(stack));
  if (const auto refusal = file_lock_refusal(path, stack, lock_wait.wait_s()); !refusal.empty())
    throw ResultsFileFormatError(refusal);
  if (stack.find("truncated") != std::string::npos)
    throw ResultsFileFormatError(path + ": the file is truncated (" + stack +
                                 "); it was cut short by a full disk or an incomplete copy. "
                                 "Restore it from the original location");
  throw ResultsFileFormatError(path + ": corrupted or not a results file: HDF5 cannot open it (" +
                               stack + ")");
}

}  // namespace

StudyReader::StudyReader(const std::string& path)
    : path_(path), file_(std::make_unique<Hid>(open_for_reading(path))) {
  try {
    read_header();
  } catch (const Hdf5Error& e) {
    throw ResultsFileFormatError(path + ": corrupted: " + e.what());
  }
}

StudyReader::~StudyReader() = default;
StudyReader::StudyReader(StudyReader&&) noexcept = default;
StudyReader& StudyReader::operator=(StudyReader&&) noexcept = default;

void StudyReader::read_header() {
  const std::string& path = path_;
  const auto format = read_string_attribute(*file_, "format");
  if (!format || *format != kFormatName)
    throw ResultsFileFormatError(path +
                                 ": an HDF5 file, but not a slurmtune results file (its root "
                                 "has no format = \"slurmtune-study\" attribute)");
  const auto version = read_int_attribute(*file_, "schema_version");
  if (!version)
    throw ResultsFileFormatError(path + ": a slurmtune results file without a schema_version");
  schema_version_ = *version;
  if (schema_version_ < 1)
    throw ResultsFileFormatError(path + ": corrupted: schema_version " +
                                 std::to_string(schema_version_) + " (versions start at 1)");
  if (schema_version_ > kSchemaVersion)
    throw ResultsFileFormatError(
        path + ": written with results-file schema " + std::to_string(schema_version_) +
        " by slurmtune " + attribute("slurmtune_version") + "; this slurmtune reads schema " +
        std::to_string(kSchemaVersion) + " and older. Use a newer slurmtune");
  try {
    spec_ = config::parse_study(attribute("resolved_study"), path + " (resolved study)");
    // A resolved study names every MOBSTER option; one without `wave` was written before
    // launch waves, and its suggestions were made without them.
    if (spec_.sampler.kind == core::SamplerKind::Mobster && !spec_.sampler.mobster_wave_named)
      spec_.sampler.mobster.wave = 0;
    // Likewise `trusted_trials`, named wherever it or its default is not 0: a file without
    // it was written before trust, and its prior's earlier best were judged at the rungs.
    if (!spec_.scheduler.trusted_trials_named) spec_.scheduler.trusted_trials = 0;
    // Likewise `prior_startup`, named with every prior since 2026-12-04: a prior without it
    // drew all of its start-ups. (`prior_exact` was always named.)
    if (!spec_.sampler.prior_files.empty() && !spec_.sampler.prior_startup_named)
      spec_.sampler.mobster.prior_startup.reset();
    // What it records was resolved for the trials its study ran at once.
    spec_.sampler.prior_start_resolved = true;
    // Likewise `prior_check` and `trust_check`, named wherever they are on or their default
    // is (since 2026-12-04): a file without them ran without.
    if (!spec_.sampler.prior_check_named) spec_.sampler.mobster.prior_check = false;
    if (!spec_.scheduler.trust_check_named) spec_.scheduler.trust_check = false;
    // Likewise the waiver and the rung it is weighed from, named wherever they or their
    // defaults are set (since C18, 2026-12-04): a file without them had none.
    if (!spec_.scheduler.trust_check_waiver_named)
      spec_.scheduler.trust_check_waiver = core::TrustWaiver::None;
    if (!spec_.scheduler.trust_check_waiver_from_rung_named)
      spec_.scheduler.trust_check_waiver_from_rung = 0;
    spec_.text = attribute("study_file");
    spec_.path = attribute("study_file_path");
  } catch (const InputError& e) {
    throw ResultsFileFormatError(
        path + ": corrupted: its embedded study file does not parse: " + e.what());
  }
  layout_ = std::make_unique<StudyLayout>(spec_, schema_version_);
  read_commit();
}

void StudyReader::read_commit() {
  const Hid d = dataset("commit", layout_->commit);
  refresh_dataset(d);  // pick up the writer's latest commit
  const auto row = read_rows(d, "commit", layout_->commit, 0, 1);
  const auto& l = layout_->commit;
  const auto& k = layout_->k;
  const auto get = [&](std::size_t field) { return l.get<std::uint64_t>(row.data(), field); };
  committed_ = CommittedCounts{};
  committed_.next_seq = get(k.next_seq);
  committed_.trials = get(k.trials);
  committed_.metrics = get(k.metrics);
  committed_.events = get(k.events);
  committed_.checkpoints = get(k.checkpoints);
  committed_.sessions = get(k.sessions);
  committed_.time = l.get<double>(row.data(), k.time);
  if (layout_->has_exploits()) committed_.exploits = get(k.exploits);
  if (layout_->has_removals()) committed_.removed_checkpoints = get(k.removals);
  if (layout_->has_loop_figures()) committed_.loop = get_loop_figures(*layout_, row.data());
}

std::string StudyReader::attribute(const std::string& name) const {
  if (const auto text = read_string_attribute(*file_, name)) return *text;
  if (const auto number = read_int_attribute(*file_, name)) return std::to_string(*number);
  return "";
}

bool StudyReader::has_attribute(const std::string& name) const {
  return H5Aexists(*file_, name.c_str()) > 0;
}

Hid StudyReader::dataset(const char* name, const RowLayout& layout) const {
  const hid_t id = H5Dopen2(*file_, name, H5P_DEFAULT);
  if (id < 0)
    throw ResultsFileFormatError(path_ +
                                 ": corrupted or incomplete: the results file has no readable /" +
                                 std::string(name) + " dataset (" + error_stack_text() + ")");
  Hid d(id);
  const auto corrupted = [&](const std::string& what) {
    return ResultsFileFormatError(path_ + ": corrupted: /" + name + " " + what);
  };
  const Hid space = check(H5Dget_space(d), "H5Dget_space");
  if (const int rank = H5Sget_simple_extent_ndims(space); rank != 1)
    throw corrupted("is not a table of rows (it has " + std::to_string(rank) + " dimensions)");
  const Hid type = check(H5Dget_type(d), "H5Dget_type");
  if (H5Tget_class(type) != H5T_COMPOUND) throw corrupted("is not a table of rows (no fields)");
  for (const Field& field : layout.fields())
    if (H5Tget_member_index(type, field.name.c_str()) < 0)
      throw corrupted("has no field '" + field.name + "', which schema " +
                      std::to_string(schema_version_) + " files have");
  return d;
}

std::vector<std::byte> StudyReader::read_rows(const Hid& d, const char* name,
                                              const RowLayout& layout, std::uint64_t first,
                                              std::uint64_t count) const {
  try {
    return read_table_rows(d, layout, first, count);
  } catch (const Hdf5Error& e) {
    throw ResultsFileFormatError(path_ + ": corrupted: rows " + std::to_string(first) + " to " +
                                 std::to_string(first + count) + " of /" + name +
                                 " cannot be read (" + e.what() + ")");
  }
}

// Reads rows [0, committed) of dataset `name` and decodes each with `decode`.
template <class Record, class Decode>
std::vector<Record> StudyReader::read_all(const char* name, std::uint64_t committed,
                                          const RowLayout& layout, Decode decode) const {
  const Hid d = dataset(name, layout);
  const std::uint64_t n = std::min(committed, table_rows(d));
  const auto bytes = read_rows(d, name, layout, 0, n);
  std::vector<Record> out;
  out.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i)
    out.push_back(decode(bytes.data() + i * layout.row_size()));
  return out;
}

std::vector<TrialRecord> StudyReader::trials() const {
  const auto& l = layout_->trials;
  const auto& t = layout_->t;
  auto trials = read_all<TrialRecord>("trials", committed_.trials, l, [&](const std::byte* row) {
    TrialRecord r;
    r.id = l.get<std::uint64_t>(row, t.id);
    r.status = static_cast<TrialStatus>(l.get<std::uint8_t>(row, t.status));
    r.bracket = l.get<std::int32_t>(row, t.bracket);
    r.rung = l.get<std::int32_t>(row, t.rung);
    r.retries = l.get<std::int32_t>(row, t.retries);
    r.start_time = l.get<double>(row, t.start_time);
    r.end_time = l.get<double>(row, t.end_time);
    r.last_step = l.get<double>(row, t.last_step);
    r.last_value = l.get<double>(row, t.last_value);
    r.best_value = l.get<double>(row, t.best_value);
    r.best_step = l.get<double>(row, t.best_step);
    r.reports = l.get<std::uint64_t>(row, t.reports);
    r.nodes = l.get_string(row, t.nodes);
    r.error = l.get_string(row, t.error);
    if (layout_->has_suggestions()) {
      r.suggestion.origin = static_cast<core::SuggestionOrigin>(l.get<std::uint8_t>(row, t.origin));
      r.suggestion.position = {l.get<std::uint64_t>(row, t.sampler_words),
                               l.get<std::uint64_t>(row, t.startup_words)};
    }
    for (std::size_t p = 0; p < layout_->params.size(); ++p)
      r.config.values.push_back(get_param(*layout_, l, t.first_param, row, p));
    if (spec_.space.conditional()) {
      r.config.active.assign(layout_->params.size(), true);
      for (std::size_t p = 0; p < layout_->params.size(); ++p) {
        if (t.active[p] == StudyLayout::kAbsent) continue;
        r.config.active[p] = l.get<std::uint8_t>(row, t.active[p]) != 0;
        if (!r.config.active[p])
          r.config.values[p] = core::placeholder(spec_.space.parameters()[p].domain);
      }
    }
    if (t.best_seq != StudyLayout::kAbsent && !std::isnan(r.best_value))
      r.best_seq = l.get<std::uint64_t>(row, t.best_seq);
    for (const std::size_t f : t.objectives)
      r.objectives.push_back(l.get<double>(row, f));
    for (const std::size_t f : t.constraints)
      r.constraints.push_back(l.get<double>(row, f));
    return r;
  });
  // Trial i is row i (the writer appends them in id order): anything else was not
  // written by slurmtune, and every reader indexes trials by id.
  for (std::size_t i = 0; i < trials.size(); ++i)
    if (trials[i].id != i)
      throw ResultsFileFormatError(path_ + ": corrupted: /trials row " + std::to_string(i) +
                                   " has id " + std::to_string(trials[i].id) +
                                   " (trial i is row i)");
  return trials;
}

std::uint64_t StudyReader::metric_rows() const {
  return committed_.metrics;
}

void StudyReader::for_each_in_seq_order(const std::vector<EventRecord>& events,
                                        const std::function<void(const EventRecord&)>& on_event,
                                        const std::function<void(const MetricRecord&)>& on_metric,
                                        std::uint64_t from_seq) const {
  std::size_t next = 0;
  while (next < events.size() && events[next].seq < from_seq)
    ++next;
  const auto events_before = [&](std::uint64_t seq) {
    for (; next < events.size() && events[next].seq < seq; ++next)
      on_event(events[next]);
  };
  for_each_metric(
      [&](const MetricRecord& m) {
        events_before(m.seq);
        on_metric(m);
      },
      262144, from_seq == 0 ? 0 : first_metric_row_at(from_seq));
  events_before(UINT64_MAX);
}

std::uint64_t StudyReader::first_metric_row_at(std::uint64_t seq) const {
  const Hid d = dataset("metrics", layout_->metrics);
  std::uint64_t low = 0, high = std::min(committed_.metrics, table_rows(d));
  const auto& l = layout_->metrics;
  while (low < high) {
    const std::uint64_t mid = low + (high - low) / 2;
    const auto row = read_rows(d, "metrics", l, mid, 1);
    if (l.get<std::uint64_t>(row.data(), layout_->m.seq) < seq)
      low = mid + 1;
    else
      high = mid;
  }
  return low;
}

void StudyReader::for_each_metric(const std::function<void(const MetricRecord&)>& sink,
                                  std::uint64_t chunk_rows, std::uint64_t first_row) const {
  const Hid d = dataset("metrics", layout_->metrics);
  const std::uint64_t n = std::min(committed_.metrics, table_rows(d));
  const auto& l = layout_->metrics;
  const auto& m = layout_->m;
  const std::size_t metrics = spec_.metrics.size();
  MetricRecord r;
  r.values.resize(metrics);
  // In chunks, so ten million rows need a few megabytes, not a gigabyte.
  for (std::uint64_t first = first_row; first < n; first += chunk_rows) {
    const std::uint64_t count = std::min(chunk_rows, n - first);
    const auto bytes = read_rows(d, "metrics", l, first, count);
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::byte* row = bytes.data() + i * l.row_size();
      r.seq = l.get<std::uint64_t>(row, m.seq);
      r.trial = l.get<std::uint64_t>(row, m.trial);
      r.step = l.get<double>(row, m.step);
      r.time = l.get<double>(row, m.time);
      for (std::size_t k = 0; k < metrics; ++k)
        r.values[k] = l.get<double>(row, m.first_metric + k);
      sink(r);
    }
  }
}

EventRecord StudyReader::decode_event(const std::byte* row) const {
  const auto& l = layout_->events;
  const auto& e = layout_->e;
  EventRecord r{
      l.get<std::uint64_t>(row, e.seq), l.get<std::uint64_t>(row, e.trial),
      l.get<double>(row, e.time),       static_cast<EventKind>(l.get<std::uint8_t>(row, e.kind)),
      l.get<std::int32_t>(row, e.rung), l.get<double>(row, e.step),
      l.get<double>(row, e.milestone),  l.get<double>(row, e.value),
      l.get<double>(row, e.cutoff),     std::nullopt};
  if (layout_->has_predictions() && !std::isnan(l.get<double>(row, e.predicted_mean)))
    r.prediction = core::PredictedFinal{
        l.get<double>(row, e.predicted_at), l.get<double>(row, e.predicted_mean),
        l.get<double>(row, e.predicted_lower), l.get<double>(row, e.predicted_upper)};
  return r;
}

std::vector<EventRecord> StudyReader::events() const {
  return read_all<EventRecord>("events", committed_.events, layout_->events,
                               [&](const std::byte* row) { return decode_event(row); });
}

void StudyReader::for_each_event(const std::function<void(const EventRecord&)>& sink,
                                 std::uint64_t chunk_rows) const {
  const auto& l = layout_->events;
  const Hid d = dataset("events", l);
  const std::uint64_t n = std::min(committed_.events, table_rows(d));
  for (std::uint64_t first = 0; first < n; first += chunk_rows) {
    const std::uint64_t count = std::min(chunk_rows, n - first);
    const auto bytes = read_rows(d, "events", l, first, count);
    for (std::uint64_t i = 0; i < count; ++i)
      sink(decode_event(bytes.data() + i * l.row_size()));
  }
}

std::vector<CheckpointRecord> StudyReader::checkpoints() const {
  const auto& l = layout_->checkpoints;
  const auto& c = layout_->c;
  return read_all<CheckpointRecord>(
      "checkpoints", committed_.checkpoints, l, [&](const std::byte* row) {
        return CheckpointRecord{l.get<std::uint64_t>(row, c.trial), l.get<double>(row, c.step),
                                l.get<double>(row, c.time), l.get<std::uint64_t>(row, c.size),
                                l.get_string(row, c.path)};
      });
}

std::vector<RemovedCheckpoint> StudyReader::removed_checkpoints() const {
  if (!layout_->has_removals()) return {};
  const auto& l = layout_->removals;
  const auto& r = layout_->r;
  const auto reasons = core::checkpoint_removal_reason_names().size();
  return read_all<RemovedCheckpoint>(
      "removed_checkpoints", committed_.removed_checkpoints, l, [&](const std::byte* row) {
        RemovedCheckpoint out;
        out.removal.trial = l.get<std::uint64_t>(row, r.trial);
        out.removal.step = l.get<double>(row, r.step);
        out.removal.bytes = l.get<std::uint64_t>(row, r.size);
        out.removal.path = l.get_string(row, r.path);
        const auto reason = l.get<std::uint8_t>(row, r.reason);
        if (reason >= reasons)
          throw ResultsFileFormatError(path_ + ": corrupted: /removed_checkpoints has reason " +
                                       std::to_string(reason) + ", which no version writes");
        out.removal.reason = static_cast<core::CheckpointRemoval::Reason>(reason);
        out.time = l.get<double>(row, r.time);
        return out;
      });
}

std::vector<ExploitRecord> StudyReader::exploits() const {
  if (!layout_->has_exploits()) return {};
  const auto& l = layout_->exploits;
  const auto& x = layout_->x;
  return read_all<ExploitRecord>("exploits", committed_.exploits, l, [&](const std::byte* row) {
    ExploitRecord r;
    r.seq = l.get<std::uint64_t>(row, x.seq);
    r.time = l.get<double>(row, x.time);
    r.trial = l.get<std::uint64_t>(row, x.trial);
    r.step = l.get<double>(row, x.step);
    r.donor = l.get<std::uint64_t>(row, x.donor);
    r.donor_step = l.get<double>(row, x.donor_step);
    r.operations = l.get_string(row, x.operations);
    for (std::size_t p = 0; p < layout_->params.size(); ++p)
      r.config.values.push_back(get_param(*layout_, l, x.first_param, row, p));
    return r;
  });
}

core::Configuration StudyReader::config_at_best(const TrialRecord& trial) const {
  std::vector<ExploitRecord> own;
  for (auto& e : exploits())
    if (e.trial == trial.id) own.push_back(std::move(e));
  if (own.empty()) return trial.config;
  // The best report's sequence number: /trials keeps it (schema 10 on); before, its first
  // report of best_value at best_step (a trial that exploited may report a step twice,
  // before and after).
  std::optional<std::uint64_t> best_seq = trial.best_seq;
  if (layout_->t.best_seq == StudyLayout::kAbsent)
    for_each_metric([&](const MetricRecord& m) {
      if (!best_seq && m.trial == trial.id && m.step == trial.best_step && !m.values.empty() &&
          m.values[0] == trial.best_value)
        best_seq = m.seq;
    });
  core::Configuration config = trial.config;
  for (const auto& e : own)  // in sequence order
    if (best_seq && e.seq < *best_seq) config = e.config;
  return config;
}

std::vector<SessionRecord> StudyReader::sessions() const {
  const auto& l = layout_->sessions;
  const auto& s = layout_->s;
  return read_all<SessionRecord>("sessions", committed_.sessions, l, [&](const std::byte* row) {
    return SessionRecord{l.get<double>(row, s.started), l.get_string(row, s.host),
                         l.get_string(row, s.slurm_job_id), l.get_string(row, s.version),
                         l.get<std::uint64_t>(row, s.first_seq)};
  });
}

SessionBoundaries::SessionBoundaries(const std::vector<SessionRecord>& sessions) {
  for (std::size_t k = 1; k < sessions.size(); ++k)
    starts_.push_back(sessions[k].first_seq);
  std::sort(starts_.begin(), starts_.end());
}

bool SessionBoundaries::crossed(std::uint64_t seq) {
  bool crossed = false;
  while (next_ < starts_.size() && seq >= starts_[next_]) {
    crossed = true;
    ++next_;
  }
  return crossed;
}

std::vector<std::pair<int, std::string>> StudyReader::decision_snapshots() const {
  std::vector<std::pair<int, std::string>> out;
  for (int slot = 0; slot < kSnapshotSlots; ++slot)
    if (auto bytes = read_snapshot_slot(*file_, slot, kSnapshotHeaderBytes, snapshot_length))
      out.emplace_back(slot, std::move(*bytes));
  return out;
}

std::string write_ahead_log_path(const std::string& results_file) {
  return commit_log_paths(results_file)[0];
}

std::optional<std::uint64_t> logged_metric_rows(const std::string& results_file) {
  std::optional<std::uint64_t> most;
  for (const std::string& segment : commit_log_paths(results_file)) {
    if (!std::filesystem::exists(segment)) continue;
    // A segment's records bring the file to ever more rows: its newest says how many.
    const auto record = read_last_record(segment);
    if (!record) continue;
    // A record begins with its commit's number, then the file's metric rows after it.
    LogRecordReader in(*record,
                       "the results file's write-ahead log " + segment + ", its last record");
    in.u64();
    most = std::max(most.value_or(0), in.u64());
  }
  return most;
}

}  // namespace slurmtune::store
