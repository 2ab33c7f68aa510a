#pragma once
// /curves (schema 11): each trial's learning curve (the study's metric against the
// resource) thinned to at most kCurveSlots points as it grows, so that a reader draws
// any trial's curve from one row instead of passing over every report of /metrics
// (issue #63: the dashboard and the HTML page of a 10^9-report study).
//
// Row t of the two-dimensional dataset [trials, kCurveSlots] is trial t's curve; slot m
// holds its report number m * stride (counted from 0), and slots past the last kept
// report read as NaN. The stride is a power of two: when a report would go past the last
// slot, the stride doubles and the kept points move to the first half (the even slots),
// so a trial keeps between kCurveSlots / 2 and kCurveSlots evenly spaced points of its
// curve, its first report always among them. The stride is a function of the trial's
// report count alone (curve_stride), so a resumed writer takes it from /trials.reports.
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "store/file/hdf5.hpp"

namespace slurmtune::store {

inline constexpr std::size_t kCurveSlots = 128;

/// One point of a thinned curve (single precision: what a plot needs, half the bytes).
struct CurvePoint {
  float step;
  float value;
};

/// The stride of a trial's curve after `reports` reports: the least power of two that
/// keeps ceil(reports / stride) points within kCurveSlots.
std::uint64_t curve_stride(std::uint64_t reports);

/// Points of live trials' curves changed since the last take(), to be written (perhaps
/// on the flush thread, as AppendBatch).
struct CurveBatch {
  hsize_t extent = 0;                ///< rows of the dataset after this batch (0: unchanged)
  std::vector<hsize_t> coordinates;  ///< (trial, slot) of each point, in the points' order
  std::vector<CurvePoint> points;
};

/// `batches` as one, in the order taken: a point written in several by its last value.
CurveBatch joined(const std::vector<const CurveBatch*>& batches);

class CurveSamples {
 public:
  /// Creates the empty dataset in `file` (before SWMR writing starts, as every table), or
  /// opens the one a resumed file has.
  CurveSamples(hid_t file, bool fresh);

  /// Report number `index` (0, 1, ...) of a trial, at `step` with `value` (NaN: the
  /// report lacked the metric). Costs a few stores; a compaction, once per doubling of
  /// the trial's reports, kCurveSlots moves.
  void report(std::uint64_t trial, std::uint64_t index, double step, double value);
  /// A live trial of a resumed study: its row read back, its stride from its report
  /// count. A dying writer may have written the row one flush behind /trials (the row
  /// goes after /trials): a compaction it missed is made here.
  void adopt(std::uint64_t trial, std::uint64_t reports);
  /// The trial's curve is final: written at the next take(), then dropped from memory.
  void retire(std::uint64_t trial);

  /// Closes the dataset and opens it again in `file` (after H5Fstart_swmr_write, which
  /// gives open datasets the file's default chunk cache).
  void reopen(hid_t file);
  hid_t dataset() const { return dataset_; }

  CurveBatch take();
  /// Extends the dataset as `batch` says and writes its points (one point selection),
  /// then flushes it (unless told Later: tables.hpp's Flush).
  void write(const CurveBatch& batch, Flush flush = Flush::Now) const;

 private:
  struct LiveCurve {
    std::array<CurvePoint, kCurveSlots> points;
    std::uint64_t stride = 1;
    std::uint32_t dirty_first = kCurveSlots, dirty_end = 0;  // slots changed since the last take
    bool retired = false;
  };
  LiveCurve& live(std::uint64_t trial);
  void mark(std::uint64_t trial, LiveCurve& curve, std::uint32_t first, std::uint32_t end);

  Hid dataset_;
  Hid type_;
  std::uint64_t rows_;    // highest trial + 1 known
  std::uint64_t extent_;  // rows in the file, or in a batch on its way there
  std::unordered_map<std::uint64_t, LiveCurve> live_;
  std::vector<std::uint64_t> dirty_;  // trials with changed slots, each once
};

}  // namespace slurmtune::store
