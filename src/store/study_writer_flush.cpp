// StudyWriter's flushes (study_writer.hpp): the rows buffered since the last flush are
// taken as one batch and written, the commit row last; with background_flush a batch
// that comes due is written on the writer's flush thread (store/file/flush_thread.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include "core/number_text.hpp"
#include "store/decision_snapshots.hpp"
#include "store/file/commit_log.hpp"
#include "store/file/flush_thread.hpp"
#include "store/file/snapshot_slots.hpp"
#include "store/study_reader.hpp"
#include "store/study_writer.hpp"
#include "store/study_writer_objects.hpp"

namespace slurmtune::store {

std::vector<std::byte> StudyWriter::commit_row() const {
  std::vector<std::byte> row(layout_.commit.row_size());
  const auto& l = layout_.commit;
  l.put_u64(row.data(), layout_.k.next_seq, seq_);
  l.put_u64(row.data(), layout_.k.trials, h5_->trials->rows());
  l.put_u64(row.data(), layout_.k.metrics, h5_->metrics->rows());
  l.put_u64(row.data(), layout_.k.events, h5_->events->rows());
  l.put_u64(row.data(), layout_.k.checkpoints, h5_->checkpoints->rows());
  l.put_u64(row.data(), layout_.k.sessions, h5_->sessions->rows());
  if (h5_->exploits) l.put_u64(row.data(), layout_.k.exploits, h5_->exploits->rows());
  if (h5_->removals) l.put_u64(row.data(), layout_.k.removals, h5_->removals->rows());
  if (h5_->improvements) l.put_u64(row.data(), layout_.k.improvements, h5_->improvements->rows());
  l.put_f64(row.data(), layout_.k.time, unix_time_s());
  if (layout_.has_loop_figures()) put_loop_figures(layout_, row.data(), loop_figures_);
  return row;
}

struct StudyWriter::FlushBatch {
  AppendBatch metrics, events, checkpoints, sessions, exploits, removals, improvements;
  UpdateBatch trials;
  CurveBatch curves;
  DecisionSnapshots::Rows replay;  // for the decision snapshots
  std::vector<std::byte> commit;
  std::uint64_t metric_rows = 0;
  std::uint64_t ticket = 0;  // its number (commit_ticket)
  std::chrono::steady_clock::time_point taken = std::chrono::steady_clock::now();
};

StudyWriter::FlushBatch StudyWriter::take_batch() {
  FlushBatch batch;
  batch.metrics = h5_->metrics->take();
  batch.events = h5_->events->take();
  batch.checkpoints = h5_->checkpoints->take();
  batch.sessions = h5_->sessions->take();
  if (h5_->exploits) batch.exploits = h5_->exploits->take();
  if (h5_->removals) batch.removals = h5_->removals->take();
  batch.trials = h5_->trials->take();
  if (h5_->curves) {
    batch.curves = h5_->curves->take();
    batch.improvements = h5_->improvements->take();
  }
  if (snapshots_) batch.replay = snapshots_->take_rows();
  batch.commit = commit_row();
  batch.metric_rows = h5_->metrics->rows();
  batch.ticket = ++flushes_taken_;
  commit_wanted_ = false;
  return batch;
}

namespace {
// How often the loop logs the rows that came, when no decision waits.
constexpr auto kLogEvery = std::chrono::milliseconds(20);
}  // namespace

// A batch as the log keeps it: its rows table by table, in write_tables' order (a file's
// optional tables where its schema has them), and its commit row; not the decision
// snapshots' rows, which a resume replays from the file.
LogRecord StudyWriter::log_record(const FlushBatch& batch) const {
  LogRecord record;
  record.add_u64(batch.ticket);
  record.add_u64(batch.metric_rows);
  record.add_bytes(batch.commit);
  record.add_append(batch.metrics);
  record.add_append(batch.events);
  record.add_append(batch.checkpoints);
  record.add_append(batch.sessions);
  if (h5_->exploits) record.add_append(batch.exploits);
  if (h5_->removals) record.add_append(batch.removals);
  if (h5_->improvements) record.add_append(batch.improvements);
  record.add_update(batch.trials);
  if (h5_->curves) record.add_curves(batch.curves);
  return record;
}

StudyWriter::FlushBatch StudyWriter::batch_of_record(std::span<const std::byte> bytes,
                                                     const std::string& where) const {
  LogRecordReader in(bytes, where);
  FlushBatch batch;
  batch.ticket = in.u64();
  batch.metric_rows = in.u64();
  batch.commit = in.bytes(layout_.commit.row_size());
  batch.metrics = in.append(layout_.metrics.row_size());
  batch.events = in.append(layout_.events.row_size());
  batch.checkpoints = in.append(layout_.checkpoints.row_size());
  batch.sessions = in.append(layout_.sessions.row_size());
  if (h5_->exploits) batch.exploits = in.append(layout_.exploits.row_size());
  if (h5_->removals) batch.removals = in.append(layout_.removals.row_size());
  if (h5_->improvements) batch.improvements = in.append(layout_.improvements.row_size());
  batch.trials = in.update(layout_.trials.row_size());
  if (h5_->curves) batch.curves = in.curves();
  in.finish();
  return batch;
}

std::optional<std::string> StudyWriter::apply_log(const std::string& path) {
  struct Segment {
    std::string path;
    LogContents log;
    Batches batches;
    const std::vector<std::byte>& last_commit() const {
      return batches.empty() ? log.base : batches.back()->commit;
    }
  };
  const auto paths = commit_log_paths(path);
  if (!std::filesystem::exists(paths[0]) && !std::filesystem::exists(paths[1])) return std::nullopt;
  std::vector<Segment> segments;
  for (const std::string& segment : paths)
    if (std::filesystem::exists(segment))
      if (auto log = read_commit_log(segment)) segments.push_back({segment, std::move(*log), {}});
  // The file's tables as the study it records laid them out (its schema, its metrics).
  const core::StudySpec recorded = StudyReader(path).spec();
  StudyWriter writer(open_existing(path, kFileLockWaitS), recorded, WriterOptions{}, false);
  writer.final_flush_ = false;  // it writes what the log holds, nothing of its own
  // As every writer of the file: one that dies here leaves a file a SWMR reader opens,
  // and the next resume applies the log again.
  check_status(H5Fstart_swmr_write(writer.h5_->file), "H5Fstart_swmr_write " + path);
  writer.restore_chunk_caches();
  for (Segment& segment : segments)
    for (std::size_t i = 0; i < segment.log.records.size(); ++i)
      segment.batches.push_back(std::make_shared<FlushBatch>(writer.batch_of_record(
          segment.log.records[i], "the results file's write-ahead log " + segment.path +
                                      ", record " + std::to_string(i + 1))));
  const std::vector<std::byte> committed =
      read_table_rows(writer.h5_->commit, writer.layout_.commit, 0, 1);
  // Where the file's last commit lies: a segment's base or one of its records' commit
  // rows; the records after it go in, and those of the segment that goes on from there.
  const Segment* from = nullptr;
  Batches after;
  for (const Segment& segment : segments) {
    const auto& batches = segment.batches;
    const auto at = std::find_if(batches.begin(), batches.end(),
                                 [&](const auto& batch) { return batch->commit == committed; });
    if (segment.log.base == committed || at != batches.end()) {
      from = &segment;
      after.assign(segment.log.base == committed ? batches.begin() : at + 1, batches.end());
      break;
    }
  }
  if (!from)
    throw InputError("the results file's write-ahead log " + paths[0] + " (and " +
                     std::filesystem::path(paths[1]).filename().string() + ") does not continue " +
                     path +
                     "'s last commit (it belongs to another file of this name, or the file was "
                     "changed since): move it away to resume without it (the rows it holds are "
                     "then lost)");
  std::uint64_t ignored = from->log.ignored_bytes;
  for (const Segment& next : segments)
    if (&next != from && next.log.base == from->last_commit() && from->log.ignored_bytes == 0) {
      after.insert(after.end(), next.batches.begin(), next.batches.end());
      ignored += next.log.ignored_bytes;
    }
  std::uint64_t reports = 0;
  for (const auto& batch : after)
    reports += batch->metrics.bytes.size() / writer.layout_.metrics.row_size();
  writer.write_batches(after);
  for (const std::string& segment : paths)
    std::filesystem::remove(segment);
  std::string line = "the results file's write-ahead log held " + std::to_string(after.size()) +
                     " commit(s) after the file's last (" + std::to_string(reports) +
                     " report(s)): now in the file";
  if (ignored > 0)
    line += "; " + std::to_string(ignored) +
            " byte(s) after its last whole record (cut short by the writer's death) were ignored";
  return line;
}

void StudyWriter::write_tables(const FlushBatch& batch) const {
  // Appended rows first, then trial rows: a reader never sees a trial's final status
  // before the reports that led to it.
  h5_->metrics->write(batch.metrics, Flush::Later);
  h5_->events->write(batch.events, Flush::Later);
  h5_->checkpoints->write(batch.checkpoints, Flush::Later);
  h5_->sessions->write(batch.sessions, Flush::Later);
  if (h5_->exploits) h5_->exploits->write(batch.exploits, Flush::Later);
  if (h5_->removals) h5_->removals->write(batch.removals, Flush::Later);
  if (h5_->improvements) h5_->improvements->write(batch.improvements, Flush::Later);
  h5_->trials->write(batch.trials, Flush::Later);
  // After /trials: a writer that dies between the two leaves a curve behind its trial's
  // report count, which a resume mends (CurveSamples::adopt), never one ahead of it.
  if (h5_->curves) h5_->curves->write(batch.curves, Flush::Later);
}

StudyWriter::FlushBatch StudyWriter::joined_batch(const Batches& batches) const {
  const auto each = [&batches](auto member) {
    std::vector<const std::remove_reference_t<decltype((*batches.front()).*member)>*> all;
    for (const auto& batch : batches)
      all.push_back(&((*batch).*member));
    return all;
  };
  FlushBatch all;
  all.metrics = joined(each(&FlushBatch::metrics), layout_.metrics.row_size());
  all.events = joined(each(&FlushBatch::events), layout_.events.row_size());
  all.checkpoints = joined(each(&FlushBatch::checkpoints), layout_.checkpoints.row_size());
  all.sessions = joined(each(&FlushBatch::sessions), layout_.sessions.row_size());
  if (h5_->exploits)
    all.exploits = joined(each(&FlushBatch::exploits), layout_.exploits.row_size());
  if (h5_->removals)
    all.removals = joined(each(&FlushBatch::removals), layout_.removals.row_size());
  if (h5_->improvements)
    all.improvements = joined(each(&FlushBatch::improvements), layout_.improvements.row_size());
  all.trials = joined(each(&FlushBatch::trials), layout_.trials.row_size());
  if (h5_->curves) all.curves = joined(each(&FlushBatch::curves));
  return all;
}

void StudyWriter::write_batches(const Batches& batches) const {
  if (batches.empty()) return;
  // Several batches (logged one a loop turn while decisions waited) as one: each table
  // one write, a rewritten row once, not once a batch.
  if (batches.size() == 1)
    write_tables(*batches.front());
  else
    write_tables(joined_batch(batches));
  // A snapshot holds exactly the rows up to its batch, all committed below.
  if (snapshots_)
    for (const auto& batch : batches)
      if (const auto due = snapshots_->replay(batch->replay))
        write_snapshot_slot(h5_->file, due->slot, due->bytes);
  // Each table once, in the order above: a compressed partial chunk is deflated once
  // for all the batches, not once for each.
  flush_dataset(h5_->metrics->dataset(), "metrics");
  flush_dataset(h5_->events->dataset(), "events");
  flush_dataset(h5_->checkpoints->dataset(), "checkpoints");
  flush_dataset(h5_->sessions->dataset(), "sessions");
  if (h5_->exploits) flush_dataset(h5_->exploits->dataset(), "exploits");
  if (h5_->removals) flush_dataset(h5_->removals->dataset(), "removed_checkpoints");
  if (h5_->improvements) flush_dataset(h5_->improvements->dataset(), "improvements");
  flush_dataset(h5_->trials->dataset(), "trials");
  if (h5_->curves) flush_dataset(h5_->curves->dataset(), "curves");
  // Last: the commit row makes everything above count. A writer killed before this
  // line leaves the previous commit in place, and with it a consistent study.
  write_single_row(h5_->commit, layout_.commit, batches.back()->commit.data());
}

void StudyWriter::recycle(FlushBatch& written) const {
  h5_->metrics->recycle(std::move(written.metrics));
  h5_->events->recycle(std::move(written.events));
  h5_->trials->recycle(std::move(written.trials));
}

std::uint64_t StudyWriter::durable_ticket() const {
  return std::max<std::uint64_t>(flushes_durable_, logged_ticket_);
}

void StudyWriter::flush_after_row() {
  if (log_) {
    commit_if_due();
  } else {
    flush_if_due();
  }
}

bool StudyWriter::flush_if_due() {
  // Logged when a decision waits, and at least every kLogEvery while rows come: the
  // batch a commit takes at the flush interval is then small, not a second of rows
  // (at 16,384 trials 12 MB, which took the loop 30-60 ms to copy and write).
  if (log_ && (commit_wanted_ ||
               (seq_ != logged_seq_ && std::chrono::steady_clock::now() - logged_at_ >= kLogEvery)))
    log_batch();
  return commit_if_due();
}

void StudyWriter::log_batch() {
  auto batch = std::make_shared<FlushBatch>(take_batch());
  log_->append(log_record(*batch));
  logged_ticket_ = batch->ticket;
  logged_seq_ = seq_;
  logged_at_ = std::chrono::steady_clock::now();
  flushed_metric_rows_ = batch->metric_rows;
  logged_.push_back(std::move(batch));
}

bool StudyWriter::commit_if_due() {
  const auto now = std::chrono::steady_clock::now();
  // Due at the flush interval, or (without a log) when a commit is asked for and its gap
  // is over.
  const bool asked_and_due = !log_ && commit_wanted_ && !gap_left_s(now);
  if (std::chrono::duration<double>(now - last_flush_).count() < options_.flush_interval_s &&
      !asked_and_due)
    return false;
  if (!flusher_) {
    flush();
    return true;
  }
  if (flusher_->busy()) return false;  // the last one is still being written: next turn
  if (log_) {
    log_batch();  // every batch handed over is logged: a resume finds its commit row there
    // The batches after this commit go to the other segment, whose records (the commit
    // before's) are in the file: the flush thread is free, and it did not fail.
    if (flushes_durable_ >= handed_ticket_) log_->switch_segments(logged_.back()->commit);
  } else {
    logged_.push_back(std::make_shared<FlushBatch>(take_batch()));
  }
  auto batches = std::make_shared<Batches>(std::move(logged_));
  logged_.clear();
  handed_commit_ = batches->back()->commit;
  handed_ticket_ = batches->back()->ticket;
  auto done = std::make_shared<DurableCommit>();
  flusher_->try_start(
      [this, batches, done, taken = batches->front()->taken, logged = log_ != nullptr] {
        const auto start = std::chrono::steady_clock::now();
        write_batches(*batches);
        for (auto& batch : *batches)
          recycle(*batch);
        // With a log the loop counted these rows durable when it logged them.
        if (!logged) flushed_metric_rows_ = batches->back()->metric_rows;
        flushes_durable_ = batches->back()->ticket;
        *done = {batches->back()->ticket, std::chrono::duration<double>(start - taken).count(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
      },
      // Once the thread is free: a loop woken by the notice can start the next commit.
      [this, done] {
        if (on_durable_) on_durable_(*done);
      });
  last_flush_ = now;
  return true;
}

std::optional<double> StudyWriter::commit_due_in_s() const {
  if (log_) return std::nullopt;  // logged at once: no commit waits for its gap
  return commit_wanted_ ? gap_left_s(std::chrono::steady_clock::now()) : std::nullopt;
}

std::optional<double> StudyWriter::gap_left_s(std::chrono::steady_clock::time_point now) const {
  if (!flusher_) return std::nullopt;  // direct commits have no gap
  const double since = std::chrono::duration<double>(now - last_flush_).count();
  if (since >= options_.min_commit_gap_s) return std::nullopt;
  return options_.min_commit_gap_s - since;
}

void StudyWriter::flush() {
  if (flusher_) flusher_->wait();
  Batches batches = std::move(logged_);
  logged_.clear();
  batches.push_back(std::make_shared<FlushBatch>(take_batch()));
  write_batches(batches);
  for (auto& batch : batches)
    recycle(*batch);
  flushed_metric_rows_ = batches.back()->metric_rows;
  flushes_durable_ = batches.back()->ticket;
  handed_commit_ = batches.back()->commit;
  handed_ticket_ = batches.back()->ticket;
  // The file has every row: the log goes on from this commit.
  if (log_) log_->switch_segments(handed_commit_);
  last_flush_ = std::chrono::steady_clock::now();
}

void StudyWriter::commit_soon() {
  if (!flusher_) return flush();
  commit_wanted_ = true;
}

void StudyWriter::on_durable(std::function<void(const DurableCommit&)> notify) {
  if (flusher_) flusher_->wait();  // no job reads it while it changes
  on_durable_ = std::move(notify);
}

std::optional<double> StudyWriter::flush_thread_cpu_s() const {
  if (!flusher_) return std::nullopt;
  return flusher_->cpu_seconds();
}

std::optional<std::string> StudyWriter::write_ahead_summary() const {
  if (!log_) return std::nullopt;
  const CommitLog::Volume& v = log_->volume();
  const auto megabytes = [](std::uint64_t bytes) {
    return core::format_double(std::round(static_cast<double>(bytes) / 1e5) / 10);
  };
  return "the results file's write-ahead log: " + std::to_string(v.records) + " record(s), " +
         megabytes(v.record_bytes) + " MB of rows written as " + megabytes(v.stored_bytes) +
         " MB (LZ4)";
}

void StudyWriter::keep_decision_snapshots(std::unique_ptr<DecisionReplay> replay, int slot_in_use,
                                          std::function<void(const std::string&)> warn) {
  if (!(options_.snapshot_interval_s > 0))
    throw UsageError("keep_decision_snapshots: the writer was made without snapshot slots");
  if (flusher_) flusher_->wait();  // no flush reads snapshots_ while it changes
  snapshots_ = std::make_unique<DecisionSnapshots>(std::move(replay), metric_names_.size(),
                                                   session_first_seq_, options_.snapshot_interval_s,
                                                   slot_in_use, std::move(warn));
}

}  // namespace slurmtune::store
