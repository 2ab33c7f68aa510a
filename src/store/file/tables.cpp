#include "store/file/tables.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace slurmtune::store {

Hid create_table(hid_t file, const std::string& name, const RowLayout& layout,
                 const DatasetOptions& options) {
  const hsize_t zero = 0, unlimited = H5S_UNLIMITED;
  const Hid space = check(H5Screate_simple(1, &zero, &unlimited), "H5Screate_simple");
  const Hid dcpl = check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
  check_status(H5Pset_chunk(dcpl, 1, &options.chunk_rows), "H5Pset_chunk");
  if (options.deflate_level >= 0) {
    check_status(H5Pset_shuffle(dcpl), "H5Pset_shuffle");
    check_status(H5Pset_deflate(dcpl, static_cast<unsigned>(options.deflate_level)),
                 "H5Pset_deflate");
    // Not H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS (a partial last chunk stored raw until
    // rows fill it), though every flush rewrites that chunk compressed: HDF5 1.10's SWMR
    // readers then read the last chunk of a growing table as garbage now and then (rows
    // of a committed flush with trial ids past /trials; tests/python/module/
    // check_study_module.py). Small chunks keep the rewrites small instead.
  }
  const Hid type = layout.compound_type();
  return check(
      H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, dcpl, table_access(options)),
      "H5Dcreate2 " + name);
}

Hid table_access(const DatasetOptions& options) {
  Hid dapl = check(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate");
  if (options.write_in_place)
    // No chunk fits a cache of 0 bytes, so HDF5 writes a selection in an allocated,
    // unfiltered chunk straight to the file (a chunk not yet allocated is made once,
    // with its fill value).
    check_status(
        H5Pset_chunk_cache(dapl, H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 0, H5D_CHUNK_CACHE_W0_DEFAULT),
        "H5Pset_chunk_cache");
  else if (options.chunk_cache_bytes > 0)
    // A prime number of slots well above the chunks the cache holds; w0 = 0: chunks
    // rewritten in full stay as long as those partly written (all are rewritten again).
    check_status(H5Pset_chunk_cache(dapl, 10007, options.chunk_cache_bytes, 0.0),
                 "H5Pset_chunk_cache");
  return dapl;
}

std::size_t chunk_cache_bytes(hid_t dataset) {
  const Hid access = check(H5Dget_access_plist(dataset), "H5Dget_access_plist");
  std::size_t slots = 0, bytes = 0;
  double w0 = 0;
  check_status(H5Pget_chunk_cache(access, &slots, &bytes, &w0), "H5Pget_chunk_cache");
  return bytes;
}

Hid create_single_row(hid_t file, const std::string& name, const RowLayout& layout) {
  const hsize_t one = 1;
  const Hid space = check(H5Screate_simple(1, &one, nullptr), "H5Screate_simple");
  const Hid type = layout.compound_type();
  return check(H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               "H5Dcreate2 " + name);
}

void write_single_row(hid_t dataset, const RowLayout& layout, const std::byte* row) {
  const Hid type = layout.compound_type();
  check_status(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, row), "H5Dwrite commit");
  check_status(H5Dflush(dataset), "H5Dflush commit");
}

void refresh_dataset(hid_t dataset) {
  // Fails harmlessly on a file not opened for SWMR reading; there is nothing to refresh.
  if (H5Drefresh(dataset) < 0) H5Eclear2(H5E_DEFAULT);
}

std::uint64_t table_rows(hid_t dataset) {
  refresh_dataset(dataset);
  const Hid space = check(H5Dget_space(dataset), "H5Dget_space");
  hsize_t n = 0;
  check_status(H5Sget_simple_extent_dims(space, &n, nullptr), "H5Sget_simple_extent_dims");
  return n;
}

namespace {
void write_rows(hid_t dataset, hid_t type, hsize_t first, hsize_t count, const std::byte* data) {
  const Hid file_space = check(H5Dget_space(dataset), "H5Dget_space");
  check_status(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &first, nullptr, &count, nullptr),
               "H5Sselect_hyperslab");
  const Hid memory_space = check(H5Screate_simple(1, &count, nullptr), "H5Screate_simple");
  check_status(H5Dwrite(dataset, type, memory_space, file_space, H5P_DEFAULT, data), "H5Dwrite");
}
}  // namespace

std::vector<std::byte> read_table_rows(hid_t dataset, const RowLayout& layout, std::uint64_t first,
                                       std::uint64_t count) {
  std::vector<std::byte> rows(count * layout.row_size());
  if (count == 0) return rows;
  const hsize_t start = first, n = count;
  const Hid file_space = check(H5Dget_space(dataset), "H5Dget_space");
  check_status(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &n, nullptr),
               "H5Sselect_hyperslab");
  const Hid memory_space = check(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
  const Hid type = layout.compound_type();
  check_status(H5Dread(dataset, type, memory_space, file_space, H5P_DEFAULT, rows.data()),
               "H5Dread");
  return rows;
}

AppendTable::AppendTable(Hid dataset, RowLayout layout, std::uint64_t existing_rows)
    : dataset_(std::move(dataset)),
      layout_(std::move(layout)),
      type_(layout_.compound_type()),
      taken_(existing_rows) {}

std::byte* AppendTable::new_row() {
  const std::size_t size = layout_.row_size();
  buffer_.resize(buffer_.size() + size);
  return buffer_.data() + buffer_.size() - size;
}

AppendBatch AppendTable::take() {
  AppendBatch batch{taken_, {}};
  taken_ += buffered();
  batch.bytes.swap(buffer_);
  {
    const std::lock_guard lock(spare_mutex_);
    buffer_.swap(spare_);
  }
  buffer_.clear();
  // Room for as many rows as this flush took, in memory already touched where it can be.
  buffer_.reserve(batch.bytes.size());
  return batch;
}

void AppendTable::recycle(AppendBatch&& written) {
  const std::lock_guard lock(spare_mutex_);
  if (written.bytes.capacity() > spare_.capacity()) spare_.swap(written.bytes);
}

void AppendTable::write(const AppendBatch& batch, Flush flush) const {
  const hsize_t n = batch.bytes.size() / layout_.row_size();
  if (n == 0) return;
  const hsize_t extent = batch.first + n;
  check_status(H5Dset_extent(dataset_, &extent), "H5Dset_extent");
  write_rows(dataset_, type_, batch.first, n, batch.bytes.data());
  if (flush == Flush::Now) check_status(H5Dflush(dataset_), "H5Dflush");
}

UpdateTable::UpdateTable(Hid dataset, RowLayout layout, std::uint64_t existing_rows)
    : dataset_(std::move(dataset)),
      layout_(std::move(layout)),
      type_(layout_.compound_type()),
      rows_(existing_rows),
      extent_(existing_rows) {}

std::byte* UpdateTable::bytes_of(std::uint32_t slot) const {
  return blocks_[slot / kRowsPerBlock].get() + (slot % kRowsPerBlock) * layout_.row_size();
}

std::uint32_t UpdateTable::new_slot(std::uint64_t index) {
  std::uint32_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
    if (slot % kRowsPerBlock == 0)
      blocks_.push_back(std::make_unique<std::byte[]>(kRowsPerBlock * layout_.row_size()));
  }
  slots_[slot] = Slot{index, false, false};
  std::fill_n(bytes_of(slot), layout_.row_size(), std::byte{0});
  slot_of_.emplace(index, slot);
  rows_ = std::max(rows_, index + 1);
  return slot;
}

std::byte* UpdateTable::row(std::uint64_t index) {
  const auto it = slot_of_.find(index);
  const std::uint32_t slot = it != slot_of_.end() ? it->second : new_slot(index);
  if (!slots_[slot].dirty) {
    slots_[slot].dirty = true;
    dirty_.push_back(index);
  }
  return bytes_of(slot);
}

void UpdateTable::adopt(std::uint64_t index) {
  const std::vector<std::byte> bytes = index < extent_
                                           ? read_table_rows(dataset_, layout_, index, 1)
                                           : std::vector<std::byte>(layout_.row_size());
  const auto it = slot_of_.find(index);
  const std::uint32_t slot = it != slot_of_.end() ? it->second : new_slot(index);
  slots_[slot].retired = false;
  std::copy(bytes.begin(), bytes.end(), bytes_of(slot));
}

void UpdateTable::retire(std::uint64_t index) {
  const auto it = slot_of_.find(index);
  if (it == slot_of_.end() || slots_[it->second].retired) return;
  slots_[it->second].retired = true;
  retired_.push_back(index);
}

UpdateBatch UpdateTable::take() {
  UpdateBatch batch;
  if (!dirty_.empty()) {
    if (rows_ > extent_) batch.extent = extent_ = rows_;
    {
      const std::lock_guard lock(spare_mutex_);
      batch.bytes.swap(spare_);
    }
    const std::size_t size = layout_.row_size();
    batch.bytes.resize(dirty_.size() * size);  // memory a written batch has touched already
    std::sort(dirty_.begin(), dirty_.end());   // the file's order
    std::byte* out = batch.bytes.data();
    for (const std::uint64_t index : dirty_) {
      if (batch.runs.empty() || batch.runs.back().first + batch.runs.back().second != index)
        batch.runs.emplace_back(index, 0);
      ++batch.runs.back().second;
      const std::uint32_t slot = slot_of_.at(index);
      std::copy_n(bytes_of(slot), size, out);
      out += size;
      slots_[slot].dirty = false;
    }
    dirty_.clear();
  }
  for (const std::uint64_t index : retired_) {
    const auto it = slot_of_.find(index);
    if (it == slot_of_.end()) continue;  // retired twice (adopted in between)
    free_slots_.push_back(it->second);
    slot_of_.erase(it);
  }
  retired_.clear();
  return batch;
}

void UpdateTable::recycle(UpdateBatch&& written) {
  const std::lock_guard lock(spare_mutex_);
  if (written.bytes.capacity() > spare_.capacity()) spare_.swap(written.bytes);
}

void UpdateTable::write(const UpdateBatch& batch, Flush flush) const {
  if (batch.runs.empty()) return;
  if (batch.extent > 0) check_status(H5Dset_extent(dataset_, &batch.extent), "H5Dset_extent");
  const Hid file_space = check(H5Dget_space(dataset_), "H5Dget_space");
  const hsize_t rows = batch.bytes.size() / layout_.row_size();
  // The rows as a point selection, one write: a union of hyperslabs costs HDF5 1.10 a
  // walk over the spans so far for each one added (40,000 scattered rows took 23 s),
  // a point list one pass.
  std::vector<hsize_t> points;
  points.reserve(rows);
  for (const auto& [start, count] : batch.runs)
    for (hsize_t i = 0; i < count; ++i)
      points.push_back(start + i);
  check_status(H5Sselect_elements(file_space, H5S_SELECT_SET, points.size(), points.data()),
               "H5Sselect_elements");
  const Hid memory_space = check(H5Screate_simple(1, &rows, nullptr), "H5Screate_simple");
  // The points are in the file's row order, which is the order of the rows in memory.
  check_status(H5Dwrite(dataset_, type_, memory_space, file_space, H5P_DEFAULT, batch.bytes.data()),
               "H5Dwrite");
  if (flush == Flush::Now) check_status(H5Dflush(dataset_), "H5Dflush");
}

AppendBatch joined(const std::vector<const AppendBatch*>& batches, std::size_t row_size) {
  AppendBatch all;
  if (batches.empty()) return all;
  all.first = batches.front()->first;
  std::size_t bytes = 0;
  for (const AppendBatch* batch : batches)
    bytes += batch->bytes.size();
  all.bytes.reserve(bytes);
  for (const AppendBatch* batch : batches) {
    // A batch of no rows says nothing of where the next begins.
    if (batch->bytes.empty()) continue;
    if (batch->first != all.first + all.bytes.size() / row_size)
      throw Error("joining appended rows: a batch starts at row " + std::to_string(batch->first) +
                  ", the one before ended at " +
                  std::to_string(all.first + all.bytes.size() / row_size));
    all.bytes.insert(all.bytes.end(), batch->bytes.begin(), batch->bytes.end());
  }
  return all;
}

UpdateBatch joined(const std::vector<const UpdateBatch*>& batches, std::size_t row_size) {
  UpdateBatch all;
  std::unordered_map<hsize_t, const std::byte*> latest;  // each row's last version
  for (const UpdateBatch* batch : batches) {
    all.extent = std::max(all.extent, batch->extent);
    const std::byte* row = batch->bytes.data();
    for (const auto& [first, count] : batch->runs)
      for (hsize_t i = 0; i < count; ++i, row += row_size)
        latest[first + i] = row;
  }
  std::vector<hsize_t> rows;
  rows.reserve(latest.size());
  for (const auto& [index, bytes] : latest)
    rows.push_back(index);
  std::sort(rows.begin(), rows.end());
  all.bytes.resize(rows.size() * row_size);
  std::byte* out = all.bytes.data();
  for (const hsize_t index : rows) {
    if (!all.runs.empty() && all.runs.back().first + all.runs.back().second == index)
      ++all.runs.back().second;
    else
      all.runs.emplace_back(index, 1);
    out = std::copy_n(latest[index], row_size, out);
  }
  return all;
}

}  // namespace slurmtune::store
