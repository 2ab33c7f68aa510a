#include "store/tables.hpp"

#include <algorithm>

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
  }
  const Hid type = layout.compound_type();
  return check(H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
               "H5Dcreate2 " + name);
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
      flushed_(existing_rows) {}

std::byte* AppendTable::new_row() {
  const std::size_t size = layout_.row_size();
  buffer_.resize(buffer_.size() + size);
  return buffer_.data() + buffer_.size() - size;
}

void AppendTable::flush() {
  const std::uint64_t n = buffered();
  if (n == 0) return;
  const hsize_t extent = flushed_ + n;
  check_status(H5Dset_extent(dataset_, &extent), "H5Dset_extent");
  write_rows(dataset_, type_, flushed_, n, buffer_.data());
  check_status(H5Dflush(dataset_), "H5Dflush");
  flushed_ += n;
  buffer_.clear();
}

UpdateTable::UpdateTable(Hid dataset, RowLayout layout, std::uint64_t existing_rows)
    : dataset_(std::move(dataset)),
      layout_(std::move(layout)),
      type_(layout_.compound_type()),
      rows_(existing_rows),
      extent_(existing_rows) {}

std::byte* UpdateTable::row(std::uint64_t index) {
  auto [it, fresh] = live_.try_emplace(index);
  if (fresh) it->second.bytes.assign(layout_.row_size(), std::byte{0});
  if (!it->second.dirty) {
    it->second.dirty = true;
    ++dirty_count_;
  }
  rows_ = std::max(rows_, index + 1);
  return it->second.bytes.data();
}

void UpdateTable::adopt(std::uint64_t index) {
  std::vector<std::byte> bytes = index < extent_ ? read_table_rows(dataset_, layout_, index, 1)
                                                 : std::vector<std::byte>(layout_.row_size());
  live_[index] = LiveRow{std::move(bytes), false, false};
  rows_ = std::max(rows_, index + 1);
}

void UpdateTable::retire(std::uint64_t index) {
  const auto it = live_.find(index);
  if (it != live_.end()) it->second.retired = true;
}

void UpdateTable::flush() {
  if (dirty_count_ == 0) return;
  if (rows_ > extent_) {
    const hsize_t extent = rows_;
    check_status(H5Dset_extent(dataset_, &extent), "H5Dset_extent");
    extent_ = rows_;
  }
  // One write per run of consecutive dirty rows: trials start in id order, so dirty
  // rows mostly form a few long runs.
  std::vector<std::byte> run;
  auto it = live_.begin();
  while (it != live_.end()) {
    if (!it->second.dirty) {
      ++it;
      continue;
    }
    const std::uint64_t first = it->first;
    std::uint64_t next = first;
    run.clear();
    while (it != live_.end() && it->first == next && it->second.dirty) {
      run.insert(run.end(), it->second.bytes.begin(), it->second.bytes.end());
      it->second.dirty = false;
      ++next;
      ++it;
    }
    write_rows(dataset_, type_, first, next - first, run.data());
  }
  check_status(H5Dflush(dataset_), "H5Dflush");
  dirty_count_ = 0;
  std::erase_if(live_, [](const auto& entry) { return entry.second.retired; });
}

}  // namespace slurmtune::store
