#include "store/file/curve_samples.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "store/file/tables.hpp"

namespace slurmtune::store {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr std::uint32_t kSlots = static_cast<std::uint32_t>(kCurveSlots);
// Chunks of 64 trials x 16 slots (8 KiB), uncompressed, because live trials' rows are
// rewritten in place at every flush (as /trials: a compressed chunk would be deflated
// again whole for one point, and written anew elsewhere in the file). HDF5 allocates a
// chunk when a point is first written into it, so trials of few reports take 128 bytes
// each, not a whole row of 1 KiB (ASHA's million trials of one to three reports).
constexpr hsize_t kChunkTrials = 64;
constexpr hsize_t kChunkSlots = 16;

Hid point_type() {
  Hid type = check(H5Tcreate(H5T_COMPOUND, sizeof(CurvePoint)), "H5Tcreate");
  check_status(H5Tinsert(type, "step", HOFFSET(CurvePoint, step), H5T_NATIVE_FLOAT), "H5Tinsert");
  check_status(H5Tinsert(type, "value", HOFFSET(CurvePoint, value), H5T_NATIVE_FLOAT), "H5Tinsert");
  return type;
}

std::uint64_t kept_points(std::uint64_t reports, std::uint64_t stride) {
  return (reports + stride - 1) / stride;
}

Hid create_curves(hid_t file, hid_t type, hid_t access) {
  const hsize_t dims[2] = {0, kCurveSlots}, max_dims[2] = {H5S_UNLIMITED, kCurveSlots};
  const Hid space = check(H5Screate_simple(2, dims, max_dims), "H5Screate_simple");
  const Hid dcpl = check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
  const hsize_t chunk[2] = {kChunkTrials, kChunkSlots};
  check_status(H5Pset_chunk(dcpl, 2, chunk), "H5Pset_chunk");
  const CurvePoint empty{kNaN, kNaN};  // slots not reached yet, and rows of no report
  check_status(H5Pset_fill_value(dcpl, type, &empty), "H5Pset_fill_value");
  check_status(H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC), "H5Pset_fill_time");
  return check(H5Dcreate2(file, "curves", type, space, H5P_DEFAULT, dcpl, access),
               "H5Dcreate2 curves");
}

// Every other point goes, the rest move to the first half (the stride doubles).
void thin(std::array<CurvePoint, kCurveSlots>& points) {
  for (std::size_t m = 0; m < kCurveSlots / 2; ++m)
    points[m] = points[2 * m];
  std::fill(points.begin() + kCurveSlots / 2, points.end(), CurvePoint{kNaN, kNaN});
}

// Points are written in place (as /trials' rows), not through a chunk cache that writes
// a chunk whole for one point changed in it.
Hid curves_access() {
  return table_access({kChunkTrials, -1, true});
}

}  // namespace

std::uint64_t curve_stride(std::uint64_t reports) {
  std::uint64_t stride = 1;
  while (kept_points(reports, stride) > kSlots)
    stride *= 2;
  return stride;
}

CurveSamples::CurveSamples(hid_t file, bool fresh) : type_(point_type()) {
  dataset_ = fresh ? create_curves(file, type_, curves_access())
                   : check(H5Dopen2(file, "curves", curves_access()), "H5Dopen2 curves");
  const Hid space = check(H5Dget_space(dataset_), "H5Dget_space curves");
  hsize_t dims[2] = {0, 0};
  check_status(H5Sget_simple_extent_dims(space, dims, nullptr), "H5Sget_simple_extent_dims");
  if (dims[1] != kCurveSlots)
    throw InputError("results file: /curves has " + std::to_string(dims[1]) +
                     " slots a trial, not " + std::to_string(kCurveSlots));
  rows_ = extent_ = dims[0];
}

CurveSamples::LiveCurve& CurveSamples::live(std::uint64_t trial) {
  auto [it, fresh] = live_.try_emplace(trial);
  if (fresh) it->second.points.fill(CurvePoint{kNaN, kNaN});
  rows_ = std::max(rows_, trial + 1);
  return it->second;
}

void CurveSamples::mark(std::uint64_t trial, LiveCurve& curve, std::uint32_t first,
                        std::uint32_t end) {
  if (curve.dirty_first >= curve.dirty_end) dirty_.push_back(trial);
  curve.dirty_first = std::min(curve.dirty_first, first);
  curve.dirty_end = std::max(curve.dirty_end, end);
}

void CurveSamples::report(std::uint64_t trial, std::uint64_t index, double step, double value) {
  LiveCurve& curve = live(trial);
  if (index % curve.stride != 0) return;
  std::uint64_t slot = index / curve.stride;
  if (slot >= kSlots) {  // full
    thin(curve.points);
    curve.stride *= 2;
    mark(trial, curve, 0, kSlots);
    if (index % curve.stride != 0) return;
    slot = index / curve.stride;
  }
  curve.points[slot] = {static_cast<float>(step), static_cast<float>(value)};
  mark(trial, curve, static_cast<std::uint32_t>(slot), static_cast<std::uint32_t>(slot) + 1);
}

void CurveSamples::adopt(std::uint64_t trial, std::uint64_t reports) {
  LiveCurve& curve = live(trial);
  curve.stride = curve_stride(reports);
  if (trial < extent_) {
    const Hid file_space = check(H5Dget_space(dataset_), "H5Dget_space");
    const hsize_t start[2] = {trial, 0}, count[2] = {1, kCurveSlots};
    check_status(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
                 "H5Sselect_hyperslab");
    const Hid memory_space = check(H5Screate_simple(2, count, nullptr), "H5Screate_simple");
    check_status(
        H5Dread(dataset_, type_, memory_space, file_space, H5P_DEFAULT, curve.points.data()),
        "H5Dread curves");
  }
  const auto kept = static_cast<std::uint32_t>(
      std::count_if(curve.points.begin(), curve.points.end(),
                    [](const CurvePoint& p) { return !std::isnan(p.step); }));
  if (kept == kSlots && kept_points(reports, curve.stride) < kSlots) {
    // Full at half this stride: the flush that thinned it did not reach the file.
    thin(curve.points);
    mark(trial, curve, 0, kSlots);
  }
}

void CurveSamples::retire(std::uint64_t trial) {
  const auto it = live_.find(trial);
  if (it == live_.end()) return;
  it->second.retired = true;
  // A retired curve with nothing left to write goes now; one with is dropped by take().
  if (it->second.dirty_first >= it->second.dirty_end) live_.erase(it);
}

void CurveSamples::reopen(hid_t file) {
  dataset_.reset();  // a dataset's chunk cache is set when its first handle opens it
  dataset_ = check(H5Dopen2(file, "curves", curves_access()), "H5Dopen2 curves");
}

CurveBatch CurveSamples::take() {
  CurveBatch batch;
  if (dirty_.empty()) return batch;
  if (rows_ > extent_) batch.extent = extent_ = rows_;
  std::sort(dirty_.begin(), dirty_.end());  // the file's order: chunk after chunk
  for (const std::uint64_t trial : dirty_) {
    const auto it = live_.find(trial);
    LiveCurve& curve = it->second;
    for (std::uint32_t slot = curve.dirty_first; slot < curve.dirty_end; ++slot) {
      batch.coordinates.push_back(trial);
      batch.coordinates.push_back(slot);
      batch.points.push_back(curve.points[slot]);
    }
    curve.dirty_first = kSlots;
    curve.dirty_end = 0;
    if (curve.retired) live_.erase(it);
  }
  dirty_.clear();
  return batch;
}

void CurveSamples::write(const CurveBatch& batch, Flush flush) const {
  if (batch.points.empty()) return;
  if (batch.extent > 0) {
    const hsize_t dims[2] = {batch.extent, kCurveSlots};
    check_status(H5Dset_extent(dataset_, dims), "H5Dset_extent curves");
  }
  const Hid file_space = check(H5Dget_space(dataset_), "H5Dget_space");
  // A point list, as UpdateTable's rows: a union of hyperslabs costs HDF5 1.10 a walk
  // over the spans so far for each one added.
  check_status(
      H5Sselect_elements(file_space, H5S_SELECT_SET, batch.points.size(), batch.coordinates.data()),
      "H5Sselect_elements curves");
  const hsize_t n = batch.points.size();
  const Hid memory_space = check(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
  check_status(
      H5Dwrite(dataset_, type_, memory_space, file_space, H5P_DEFAULT, batch.points.data()),
      "H5Dwrite curves");
  if (flush == Flush::Now) check_status(H5Dflush(dataset_), "H5Dflush curves");
}

CurveBatch joined(const std::vector<const CurveBatch*>& batches) {
  CurveBatch all;
  std::unordered_map<std::uint64_t, std::size_t> at;  // a point's place in `all`
  for (const CurveBatch* batch : batches) {
    all.extent = std::max(all.extent, batch->extent);
    for (std::size_t i = 0; i < batch->points.size(); ++i) {
      const hsize_t trial = batch->coordinates[2 * i], slot = batch->coordinates[2 * i + 1];
      const auto [place, added] = at.try_emplace(trial * kCurveSlots + slot, all.points.size());
      if (added) {
        all.coordinates.push_back(trial);
        all.coordinates.push_back(slot);
        all.points.push_back(batch->points[i]);
      } else {
        all.points[place->second] = batch->points[i];
      }
    }
  }
  return all;
}

}  // namespace slurmtune::store
