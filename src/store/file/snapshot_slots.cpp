#include "store/file/snapshot_slots.hpp"

#include <algorithm>
#include <utility>

#include "store/file/hdf5.hpp"

namespace slurmtune::store {
namespace {

const char* slot_name(int slot) {
  return slot == 0 ? "snapshots/a" : "snapshots/b";
}

hsize_t extent_of(hid_t dataset) {
  const Hid space = check(H5Dget_space(dataset), "H5Dget_space snapshot");
  hsize_t extent = 0;
  check_status(H5Sget_simple_extent_dims(space, &extent, nullptr), "H5Sget_simple_extent_dims");
  return extent;
}

// The file's bytes [0, count) of `dataset` and memory's of as many, as dataspaces.
std::pair<Hid, Hid> first_bytes(hid_t dataset, hsize_t count) {
  const hsize_t start = 0;
  Hid file_space = check(H5Dget_space(dataset), "H5Dget_space snapshot");
  check_status(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &count, nullptr),
               "H5Sselect_hyperslab snapshot");
  return {std::move(file_space), check(H5Screate_simple(1, &count, nullptr), "H5Screate_simple")};
}

// Reads bytes [0, count) of `dataset`.
std::string read_prefix(hid_t dataset, hsize_t count) {
  std::string bytes(count, '\0');
  if (count == 0) return bytes;
  const auto [file_space, memory_space] = first_bytes(dataset, count);
  check_status(
      H5Dread(dataset, H5T_NATIVE_UCHAR, memory_space, file_space, H5P_DEFAULT, bytes.data()),
      "H5Dread snapshot");
  return bytes;
}

}  // namespace

bool has_snapshot_slots(hid_t file) {
  const htri_t group = H5Lexists(file, "snapshots", H5P_DEFAULT);
  return group > 0 && H5Lexists(file, slot_name(0), H5P_DEFAULT) > 0 &&
         H5Lexists(file, slot_name(1), H5P_DEFAULT) > 0;
}

void create_snapshot_slots(hid_t file) {
  if (has_snapshot_slots(file)) return;
  if (H5Lexists(file, "snapshots", H5P_DEFAULT) <= 0)
    check(H5Gcreate2(file, "snapshots", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
          "H5Gcreate2 snapshots");
  for (int slot = 0; slot < kSnapshotSlots; ++slot) {
    if (H5Lexists(file, slot_name(slot), H5P_DEFAULT) > 0) continue;
    const hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = 1 << 16;
    const Hid space = check(H5Screate_simple(1, &zero, &unlimited), "H5Screate_simple");
    const Hid dcpl = check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
    check_status(H5Pset_chunk(dcpl, 1, &chunk), "H5Pset_chunk");
    check(H5Dcreate2(file, slot_name(slot), H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
          std::string("H5Dcreate2 ") + slot_name(slot));
  }
}

void write_snapshot_slot(hid_t file, int slot, std::string_view bytes) {
  const Hid dataset = check(H5Dopen2(file, slot_name(slot), H5P_DEFAULT),
                            std::string("H5Dopen2 ") + slot_name(slot));
  const auto count = static_cast<hsize_t>(bytes.size());
  if (extent_of(dataset) < count)
    check_status(H5Dset_extent(dataset, &count), "H5Dset_extent snapshot");
  const auto [file_space, memory_space] = first_bytes(dataset, count);
  check_status(
      H5Dwrite(dataset, H5T_NATIVE_UCHAR, memory_space, file_space, H5P_DEFAULT, bytes.data()),
      "H5Dwrite snapshot");
  check_status(H5Dflush(dataset), "H5Dflush snapshot");
}

std::optional<std::string> read_snapshot_slot(
    hid_t file, int slot, std::size_t header_bytes,
    std::optional<std::size_t> (*length)(std::string_view header)) {
  if (!has_snapshot_slots(file)) return std::nullopt;
  const Hid dataset = check(H5Dopen2(file, slot_name(slot), H5P_DEFAULT),
                            std::string("H5Dopen2 ") + slot_name(slot));
  const hsize_t extent = extent_of(dataset);
  const std::string header = read_prefix(dataset, std::min<hsize_t>(extent, header_bytes));
  const auto size = length(header);
  if (!size || *size > extent) return std::nullopt;
  return read_prefix(dataset, *size);
}

}  // namespace slurmtune::store
