#pragma once
// The two kinds of datasets in a results file. Both are one-dimensional, chunked and
// extendable, created before SWMR writing starts (HDF5 1.10 cannot create objects
// after that); afterwards rows are only appended or rewritten in place, which SWMR
// allows. Readers see a row once the dataset has been flushed.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/hdf5.hpp"
#include "store/row_layout.hpp"

namespace slurmtune::store {

struct DatasetOptions {
  hsize_t chunk_rows = 4096;
  int deflate_level = -1;  ///< -1: no compression
};

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

/// A dataset that only grows: rows are buffered in memory and appended by flush().
class AppendTable {
 public:
  AppendTable(Hid dataset, RowLayout layout, std::uint64_t existing_rows);

  /// A zeroed row at the end of the buffer, to be filled through layout().
  std::byte* new_row();
  /// Extends the dataset, writes the buffered rows, flushes them to the file.
  void flush();
  const RowLayout& layout() const { return layout_; }
  std::uint64_t rows() const { return flushed_ + buffered(); }
  std::uint64_t buffered() const { return buffer_.size() / layout_.row_size(); }

 private:
  Hid dataset_;
  RowLayout layout_;
  Hid type_;  // the compound type, built once: flushes write with it every second
  std::uint64_t flushed_;
  std::vector<std::byte> buffer_;
};

/// A dataset whose rows are rewritten in place (one row per trial, row index = trial
/// id). Rows of live trials are kept in memory; a retired row is written once more and
/// then forgotten, so memory follows the number of running trials, not of all trials.
class UpdateTable {
 public:
  UpdateTable(Hid dataset, RowLayout layout, std::uint64_t existing_rows);

  /// The live row of `index` for modification (zeroed when new); marks it dirty.
  std::byte* row(std::uint64_t index);
  /// Makes the row of `index` live again (resume): read back from the file when the
  /// file has it, zeroed otherwise; not marked dirty.
  void adopt(std::uint64_t index);
  bool is_live(std::uint64_t index) const { return live_.contains(index); }
  /// The row is final: written at the next flush, then dropped from memory.
  void retire(std::uint64_t index);
  /// Writes every dirty row (extending the dataset as needed) and flushes.
  void flush();
  const RowLayout& layout() const { return layout_; }
  std::uint64_t rows() const { return rows_; }

 private:
  struct LiveRow {
    std::vector<std::byte> bytes;
    bool dirty = false;
    bool retired = false;
  };
  Hid dataset_;
  RowLayout layout_;
  Hid type_;              // the compound type, built once: a flush may write many runs of rows
  std::uint64_t rows_;    // highest row index + 1 known
  std::uint64_t extent_;  // rows in the file
  std::map<std::uint64_t, LiveRow> live_;
  std::size_t dirty_count_ = 0;
};

}  // namespace slurmtune::store
