#pragma once
// The two kinds of datasets in a results file. Both are one-dimensional, chunked and
// extendable, created before SWMR writing starts (HDF5 1.10 cannot create objects
// after that); afterwards rows are only appended or rewritten in place, which SWMR
// allows. Readers see a row once the dataset has been flushed.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/file/hdf5.hpp"
#include "store/file/row_layout.hpp"

namespace slurmtune::store {

struct DatasetOptions {
  hsize_t chunk_rows = 4096;
  int deflate_level = -1;  ///< -1: no compression
  /// Rows rewritten in place (/trials, /curves) go straight to their place in the file,
  /// without HDF5's chunk cache: a flush writes the rows that changed, where a cached
  /// chunk would be written whole for one changed row (unfiltered tables only).
  bool write_in_place = false;
  /// Otherwise, bytes of chunks the library keeps for the writer (0: HDF5's default,
  /// 1 MiB): a compressed table rewritten in place keeps its chunks, instead of reading
  /// each back to change rows.
  std::size_t chunk_cache_bytes = 0;
};

/// Access properties for a table opened or created with `options` (its chunk cache).
Hid table_access(const DatasetOptions& options);
/// The bytes of chunks HDF5 keeps for `dataset` as it is open now.
std::size_t chunk_cache_bytes(hid_t dataset);

/// Creates an empty extendable dataset of `layout` rows.
Hid create_table(hid_t file, const std::string& name, const RowLayout& layout,
                 const DatasetOptions& options);
/// Creates a dataset of exactly one row (rewritten in place, e.g. /commit).
Hid create_single_row(hid_t file, const std::string& name, const RowLayout& layout);
/// Overwrites row 0 of `dataset` and flushes it.
void write_single_row(hid_t dataset, const RowLayout& layout, const std::byte* row);
/// Makes a SWMR reader see the writer's latest extent and data of `dataset` (a no-op
/// for a file not being written).
void refresh_dataset(hid_t dataset);
/// Number of rows a dataset holds (after refreshing it for SWMR readers).
std::uint64_t table_rows(hid_t dataset);
/// Reads rows [first, first + count) as `layout` rows (fields matched by name).
std::vector<std::byte> read_table_rows(hid_t dataset, const RowLayout& layout, std::uint64_t first,
                                       std::uint64_t count);

/// Rows of an AppendTable taken out of its buffer, to be written (perhaps on another
/// thread: writing touches only the file, taking only the buffer).
struct AppendBatch {
  hsize_t first = 0;
  std::vector<std::byte> bytes;
};

/// `batches` as one (taken one after another: each starts where the one before ended),
/// for a group commit of several logged batches: one write a table, not one a batch.
AppendBatch joined(const std::vector<const AppendBatch*>& batches, std::size_t row_size);

/// A dataset that only grows: rows are buffered in memory and appended by flush().
class AppendTable {
 public:
  AppendTable(Hid dataset, RowLayout layout, std::uint64_t existing_rows);

  /// A zeroed row at the end of the buffer, to be filled through layout().
  std::byte* new_row();
  /// The buffered rows, handed over (rows() still counts them).
  AppendBatch take();
  /// Extends the dataset, writes `batch`, flushes it to the file (unless told Later).
  void write(const AppendBatch& batch, Flush flush = Flush::Now) const;
  hid_t dataset() const { return dataset_; }
  void flush() { write(take()); }
  /// Rows [first, first + count) as the file has them (a resumed writer's last rows).
  std::vector<std::byte> read_rows(std::uint64_t first, std::uint64_t count) const {
    return read_table_rows(dataset_, layout_, first, count);
  }
  /// Gives a written batch's memory back for the next rows (from any thread): a buffer
  /// grown from nothing after every flush copied and faulted its rows in again and again.
  void recycle(AppendBatch&& written);
  const RowLayout& layout() const { return layout_; }
  std::uint64_t rows() const { return taken_ + buffered(); }
  std::uint64_t buffered() const { return buffer_.size() / layout_.row_size(); }

 private:
  Hid dataset_;
  RowLayout layout_;
  Hid type_;             // the compound type, built once: flushes write with it every second
  std::uint64_t taken_;  // rows in the file or on their way there
  std::vector<std::byte> buffer_;
  std::mutex spare_mutex_;
  std::vector<std::byte> spare_;  // a written batch's memory, for take() to reuse
};

/// Dirty rows of an UpdateTable, copied out, to be written as AppendBatch is.
struct UpdateBatch {
  hsize_t extent = 0;  // the dataset's rows after this batch (0: unchanged)
  std::vector<std::pair<hsize_t, hsize_t>> runs;  // (first row, rows) of consecutive dirty rows
  std::vector<std::byte> bytes;                   // their rows, run after run
};

/// `batches` as one, in the order taken: a row rewritten in several by its last version.
UpdateBatch joined(const std::vector<const UpdateBatch*>& batches, std::size_t row_size);

/// A dataset whose rows are rewritten in place (one row per trial, row index = trial
/// id). Rows of live trials are kept in memory; a retired row is written once more and
/// then forgotten, so memory follows the number of running trials, not of all trials.
///
/// The live rows lie in blocks of kRowsPerBlock (a row's address stays put while it
/// lives), found by a hash of their index; take() copies the dirty ones into a buffer the
/// last written batch gave back (recycle): at 16,384 running trials each reporting every
/// second, a take that walked a tree of separately allocated rows into fresh memory held
/// the coordinator's loop for 10-19 ms a second (issue #61).
class UpdateTable {
 public:
  UpdateTable(Hid dataset, RowLayout layout, std::uint64_t existing_rows);

  /// The live row of `index` for modification (zeroed when new); marks it dirty. The
  /// address holds until the row is forgotten (the take after its retire()).
  std::byte* row(std::uint64_t index);
  /// Makes the row of `index` live again (resume): read back from the file when the
  /// file has it, zeroed otherwise; not marked dirty.
  void adopt(std::uint64_t index);
  bool is_live(std::uint64_t index) const { return slot_of_.contains(index); }
  /// The row is final: written at the next flush, then dropped from memory.
  void retire(std::uint64_t index);
  /// Every dirty row, copied out in runs of consecutive rows and marked clean; rows
  /// retired are forgotten. Costs what is dirty, not what is live.
  UpdateBatch take();
  /// A written batch's memory, for the next take() to fill (any thread).
  void recycle(UpdateBatch&& written);
  /// Extends the dataset as `batch` says, writes its runs (one write of their union:
  /// 40,000 live trials with scattered ids make thousands of runs), flushes (unless Later).
  void write(const UpdateBatch& batch, Flush flush = Flush::Now) const;
  /// Writes every dirty row (extending the dataset as needed) and flushes.
  void flush() { write(take()); }
  const RowLayout& layout() const { return layout_; }
  std::uint64_t rows() const { return rows_; }
  /// Closes the dataset and opens it again with `open` (a dataset's chunk cache is set
  /// when its first handle opens it, so the old one must close first).
  template <typename Open>
  void reopen(const Open& open) {
    dataset_.reset();
    dataset_ = open();
  }
  hid_t dataset() const { return dataset_; }

 private:
  static constexpr std::size_t kRowsPerBlock = 256;
  struct Slot {
    std::uint64_t index = 0;
    bool dirty = false, retired = false;
  };
  /// The slot of a new live row, its bytes zeroed.
  std::uint32_t new_slot(std::uint64_t index);
  std::byte* bytes_of(std::uint32_t slot) const;

  Hid dataset_;
  RowLayout layout_;
  Hid type_;              // the compound type, built once: a flush may write many runs of rows
  std::uint64_t rows_;    // highest row index + 1 known
  std::uint64_t extent_;  // rows in the file, or in a batch on its way there
  std::unordered_map<std::uint64_t, std::uint32_t> slot_of_;  // live rows by index
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<std::byte[]>> blocks_;  // slot s: block s / kRowsPerBlock
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::uint64_t> dirty_;    // live rows changed since the last take, each once
  std::vector<std::uint64_t> retired_;  // live rows to forget at the next take
  std::mutex spare_mutex_;
  std::vector<std::byte> spare_;  // a written batch's memory, for take() to reuse
};

}  // namespace slurmtune::store
