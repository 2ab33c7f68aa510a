#pragma once
// The two datasets of bytes that hold the decision snapshots (/snapshots/a and
// /snapshots/b; store/decision_replay.hpp says what a snapshot holds). A writer
// writes each new snapshot over the older one, so a writer killed while writing leaves
// the other whole. The datasets only grow (HDF5 1.10's SWMR writer cannot shrink one, nor
// create one once SWMR writing began), so a snapshot gives its own length in its header;
// they are not compressed, so a snapshot written again takes the place of the last.
#include <hdf5.h>

#include <optional>
#include <string>
#include <string_view>

namespace slurmtune::store {

inline constexpr int kSnapshotSlots = 2;

/// Makes /snapshots and its slots where the file lacks them (before SWMR writing starts).
void create_snapshot_slots(hid_t file);
/// Whether the file has them (a file no writer with snapshots has opened has not).
bool has_snapshot_slots(hid_t file);
/// Writes `bytes` at the start of slot `slot` (0 or 1), growing it where needed.
void write_snapshot_slot(hid_t file, int slot, std::string_view bytes);
/// The first `length(header)` bytes of slot `slot`: `length` gets its first
/// `header_bytes` bytes (or fewer, if that is all it has) and says how many to read in
/// all (nullopt: none). nullopt where the slot is absent or shorter than that.
std::optional<std::string> read_snapshot_slot(
    hid_t file, int slot, std::size_t header_bytes,
    std::optional<std::size_t> (*length)(std::string_view header));

}  // namespace slurmtune::store
