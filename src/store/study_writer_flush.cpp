// StudyWriter's flushes (study_writer.hpp): the rows buffered since the last flush are
// taken as one batch and written, the commit row last; with background_flush a batch
// that comes due is written on the writer's flush thread (store/file/flush_thread.hpp).
#include <chrono>
#include <memory>

#include "store/decision_snapshots.hpp"
#include "store/file/flush_thread.hpp"
#include "store/file/snapshot_slots.hpp"
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

void StudyWriter::write_batch(const FlushBatch& batch) const {
  // Appended rows first, then trial rows: a reader never sees a trial's final status
  // before the reports that led to it.
  h5_->metrics->write(batch.metrics);
  h5_->events->write(batch.events);
  h5_->checkpoints->write(batch.checkpoints);
  h5_->sessions->write(batch.sessions);
  if (h5_->exploits) h5_->exploits->write(batch.exploits);
  if (h5_->removals) h5_->removals->write(batch.removals);
  if (h5_->improvements) h5_->improvements->write(batch.improvements);
  h5_->trials->write(batch.trials);
  // After /trials: a writer that dies between the two leaves a curve behind its trial's
  // report count, which a resume mends (CurveSamples::adopt), never one ahead of it.
  if (h5_->curves) h5_->curves->write(batch.curves);
  // A snapshot holds exactly the rows this commit makes durable.
  if (snapshots_)
    if (const auto due = snapshots_->replay(batch.replay))
      write_snapshot_slot(h5_->file, due->slot, due->bytes);
  // Last: the commit row makes everything above count. A writer killed before this
  // line leaves the previous commit in place, and with it a consistent study.
  write_single_row(h5_->commit, layout_.commit, batch.commit.data());
}

void StudyWriter::recycle(FlushBatch& written) const {
  h5_->metrics->recycle(std::move(written.metrics));
  h5_->events->recycle(std::move(written.events));
  h5_->trials->recycle(std::move(written.trials));
}

bool StudyWriter::flush_if_due() {
  const auto now = std::chrono::steady_clock::now();
  // Due at the flush interval, or when a commit is asked for and its gap is over.
  const bool asked_and_due = commit_wanted_ && !gap_left_s(now);
  if (std::chrono::duration<double>(now - last_flush_).count() < options_.flush_interval_s &&
      !asked_and_due)
    return false;
  if (!flusher_) {
    flush();
    return true;
  }
  if (flusher_->busy()) return false;  // the last one is still being written: next turn
  auto batch = std::make_shared<FlushBatch>(take_batch());
  auto done = std::make_shared<DurableCommit>();
  flusher_->try_start(
      [this, batch, done, taken = now] {
        const auto start = std::chrono::steady_clock::now();
        write_batch(*batch);
        recycle(*batch);
        flushed_metric_rows_ = batch->metric_rows;
        flushes_durable_ = batch->ticket;
        *done = {batch->ticket, std::chrono::duration<double>(start - taken).count(),
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
  FlushBatch batch = take_batch();
  write_batch(batch);
  recycle(batch);
  flushed_metric_rows_ = batch.metric_rows;
  flushes_durable_ = batch.ticket;
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
