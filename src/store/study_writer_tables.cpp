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

// /trials: 1,024 rows a chunk, not compressed, its chunks in a cache of their own (why:
// open_tables).
constexpr DatasetOptions kTrialsOptions{1024, -1, std::size_t{64} << 20};

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
  // flush. Its chunks stay in a cache of their own instead of being read back to change
  // a row. A file of an earlier version keeps its compressed /trials.
  Hid t = table("trials", layout_.trials, kTrialsOptions);
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
  h5_->events = std::make_unique<AppendTable>(table("events", layout_.events, {2048, 1}),
                                              layout_.events, count(layout_.k.events));
  // 256 rows of 4 KiB paths (mostly NUL padding, which deflate removes) per chunk.
  h5_->checkpoints =
      std::make_unique<AppendTable>(table("checkpoints", layout_.checkpoints, {64, 1}),
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
  // Without it every flush read /trials' chunks back from the file and wrote them again
  // (at 16,384 running trials, most of a group commit's time at a rung crossing).
  h5_->trials->reopen([this] {
    return check(H5Dopen2(h5_->file, "trials", table_access(kTrialsOptions)), "H5Dopen2 trials");
  });
}

std::size_t StudyWriter::trials_chunk_cache_bytes() const {
  const Hid access = check(H5Dget_access_plist(h5_->trials->dataset()), "H5Dget_access_plist");
  std::size_t slots = 0, bytes = 0;
  double w0 = 0;
  check_status(H5Pget_chunk_cache(access, &slots, &bytes, &w0), "H5Pget_chunk_cache");
  return bytes;
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
