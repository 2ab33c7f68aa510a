// StudyWriter's tables (study_writer.hpp): made for a new file, or opened for a resumed
// one, which continues after its last complete flush; the live trials of a resumed study
// adopted again.
#include "store/file/curve_samples.hpp"
#include "store/file/hdf5.hpp"
#include "store/file/snapshot_slots.hpp"
#include "store/file/tables.hpp"
#include "store/study_writer.hpp"
#include "store/study_writer_objects.hpp"

namespace slurmtune::store {
namespace {

// /trials: 1,024 rows a chunk, not compressed, its rows written in place (why:
// open_tables).
constexpr DatasetOptions kTrialsOptions{1024, -1, true};
// /trials of a file written before 2026-11-29, compressed: a chunk is deflated whole for
// any row changed in it, so it stays in a cache of its own rather than being read back
// and inflated at each flush.
constexpr DatasetOptions kCompressedTrialsOptions{1024, 4, false, std::size_t{64} << 20};

// Which of the two an existing /trials is (a handle of its own, closed before the table
// opens: a dataset's chunk cache is set when its first handle opens it).
DatasetOptions trials_options(hid_t file) {
  const Hid trials = check(H5Dopen2(file, "trials", H5P_DEFAULT), "H5Dopen2 trials");
  const Hid create = check(H5Dget_create_plist(trials), "H5Dget_create_plist trials");
  const int filters = H5Pget_nfilters(create);
  check_status(filters, "H5Pget_nfilters trials");
  return filters > 0 ? kCompressedTrialsOptions : kTrialsOptions;
}

}  // namespace

void StudyWriter::open_tables(bool fresh) {
  // A resumed writer continues after the last complete flush: rows a dying writer left
  // beyond it are overwritten.
  std::vector<std::byte> committed(layout_.commit.row_size());
  if (fresh) {
    h5_->commit = create_single_row(h5_->file, "commit", layout_.commit);
  } else {
    h5_->commit = check(H5Dopen2(h5_->file, "commit", H5P_DEFAULT), "H5Dopen2 commit");
    committed = read_table_rows(h5_->commit, layout_.commit, 0, 1);
  }
  const auto count = [&](std::size_t field) {
    return layout_.commit.get<std::uint64_t>(committed.data(), field);
  };
  const auto table = [&](const char* name, const RowLayout& layout, DatasetOptions options) {
    return fresh ? create_table(h5_->file, name, layout, options)
                 : check(H5Dopen2(h5_->file, name, table_access(options)),
                         std::string("H5Dopen2 ") + name);
  };
  // Chunk sizes: a chunk is the unit of compression and of SWMR visibility; these keep
  // chunks between 64 KiB and 1 MiB for typical rows.
  //
  // /trials is rewritten in place at every flush (each running trial's row changes with
  // its reports), so it is not compressed: a compressed chunk is deflated again whole
  // for one changed row (at 16,384 running trials, 11 MB a second, 100 ms of the loop)
  // and, its size changing, written anew elsewhere in the file, which grew with every
  // flush. Its changed rows are written in place, without a chunk cache: a cached chunk
  // (700 KiB of 1,024 rows) is written whole at each flush for any row changed in it,
  // which at 16,384 trials reporting every second was 16 chunks a group commit and
  // 0.8 GB a second of writes (doc/performance/control-plane.md). A file of an earlier
  // version keeps its compressed /trials, and with it a chunk cache.
  Hid t = table("trials", layout_.trials, fresh ? kTrialsOptions : trials_options(h5_->file));
  const std::uint64_t trial_extent = fresh ? 0 : table_rows(t);
  h5_->trials = std::make_unique<UpdateTable>(std::move(t), layout_.trials, trial_extent);
  //
  // Each flush rewrites the last, partial chunk of /metrics and /events compressed, and
  // a larger version cannot take the place of the one before: with group commits every
  // few milliseconds that waste grows with the chunk (src/store/file/tables.cpp says why
  // it is not stored raw). Chunks of 2,048 rows (16,384 and 8,192 before 2026-11-29)
  // waste an eighth as much and compress nearly as well.
  h5_->metrics = std::make_unique<AppendTable>(
      table("metrics", layout_.metrics, {2048, options_.metrics_deflate}), layout_.metrics,
      count(layout_.k.metrics));
  flushed_metric_rows_ = h5_->metrics->rows();
  // /events and /checkpoints get a few rows a commit, yet their partial chunks were
  // deflated again at each: at 2,048 nodes 1.3 ms a commit each with 2,048 and 64 rows a
  // chunk, a third of the flush thread. 256 rows (23 KiB) and 16 rows of 4 KiB paths
  // (mostly NUL padding, which deflate removes) cost a third as much.
  h5_->events = std::make_unique<AppendTable>(table("events", layout_.events, {256, 1}),
                                              layout_.events, count(layout_.k.events));
  h5_->checkpoints =
      std::make_unique<AppendTable>(table("checkpoints", layout_.checkpoints, {16, 1}),
                                    layout_.checkpoints, count(layout_.k.checkpoints));
  h5_->sessions = std::make_unique<AppendTable>(table("sessions", layout_.sessions, {64, -1}),
                                                layout_.sessions, count(layout_.k.sessions));
  if (layout_.has_exploits())
    h5_->exploits = std::make_unique<AppendTable>(table("exploits", layout_.exploits, {1024, 4}),
                                                  layout_.exploits, count(layout_.k.exploits));
  if (layout_.has_removals())
    h5_->removals =
        std::make_unique<AppendTable>(table("removed_checkpoints", layout_.removals, {256, 4}),
                                      layout_.removals, count(layout_.k.removals));
  if (layout_.has_curves()) {
    h5_->curves = std::make_unique<CurveSamples>(h5_->file, fresh);
    h5_->improvements =
        std::make_unique<AppendTable>(table("improvements", layout_.improvements, {1024, 4}),
                                      layout_.improvements, count(layout_.k.improvements));
    if (const std::uint64_t rows = count(layout_.k.improvements); rows > 0)
      study_best_ = layout_.improvements.get<double>(
          h5_->improvements->read_rows(rows - 1, 1).data(), layout_.i.value);
  }
  // Before SWMR writing starts, which cannot create objects.
  if (options_.snapshot_interval_s > 0) create_snapshot_slots(h5_->file);
}

void StudyWriter::restore_chunk_caches() {
  // Without it every flush would keep /trials' and /curves' chunks in the file's default
  // cache and write each whole for one changed row, or read it back once evicted.
  h5_->trials->reopen([this] {
    const DatasetOptions options = trials_options(h5_->file);
    return check(H5Dopen2(h5_->file, "trials", table_access(options)), "H5Dopen2 trials");
  });
  if (h5_->curves) h5_->curves->reopen(h5_->file);
}

std::size_t StudyWriter::trials_chunk_cache_bytes() const {
  return chunk_cache_bytes(h5_->trials->dataset());
}

std::optional<std::size_t> StudyWriter::curves_chunk_cache_bytes() const {
  if (!h5_->curves) return std::nullopt;
  return chunk_cache_bytes(h5_->curves->dataset());
}

void StudyWriter::adopt_live_trials(const WriterPosition& position) {
  // Their rows are read back and rewritten with the status the replay derived: a
  // dying writer may have left a row ahead of the committed events.
  for (const auto& [trial, status] : position.live) {
    h5_->trials->adopt(trial);
    std::byte* row = h5_->trials->row(trial);
    layout_.trials.put_enum(row, layout_.t.status, static_cast<std::uint8_t>(status));
    if (h5_->curves)
      h5_->curves->adopt(trial, layout_.trials.get<std::uint64_t>(row, layout_.t.reports));
  }
}

}  // namespace slurmtune::store
