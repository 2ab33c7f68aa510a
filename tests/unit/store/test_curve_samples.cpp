#define BOOST_TEST_MODULE store_curve_samples
// /curves and /improvements (schema 11): what the writer keeps equals the thinning of
// every report, across flushes, a resume, and a resume after a flush that did not reach
// /curves.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "config/study_file.hpp"
#include "store/file/curve_samples.hpp"
#include "store/file/hdf5.hpp"
#include "store/study_writer.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;

namespace {

const char* kStudy = R"(
[study]
name = "curves"
metric = "loss"
max_trials = 10
[search]
lr = { uniform = [0.0, 1.0] }
[scheduler]
type = "fifo"
max_t = 10000
)";

core::StudySpec spec() {
  return config::parse_study(kStudy, "study.toml");
}

// Report i of trial t: a value that varies, is sometimes missing, and improves now and then.
double value_of(core::TrialId t, std::uint64_t i) {
  if (i % 17 == 5) return std::numeric_limits<double>::quiet_NaN();
  return 100.0 / (1.0 + static_cast<double>(i) * (1.0 + static_cast<double>(t))) + (i % 3);
}

struct Row {
  std::vector<float> step, value;
};

// /curves' point type, as the file stores it.
store::Hid point_type() {
  store::Hid type = store::check(H5Tcreate(H5T_COMPOUND, sizeof(store::CurvePoint)), "type");
  H5Tinsert(type, "step", HOFFSET(store::CurvePoint, step), H5T_NATIVE_FLOAT);
  H5Tinsert(type, "value", HOFFSET(store::CurvePoint, value), H5T_NATIVE_FLOAT);
  return type;
}

Row read_curve(const std::string& path, core::TrialId trial) {
  store::quiet_hdf5_errors();
  const store::Hid file = store::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open");
  const store::Hid dataset = store::check(H5Dopen2(file, "curves", H5P_DEFAULT), "curves");
  const store::Hid type = point_type();
  const store::Hid space = store::check(H5Dget_space(dataset), "space");
  const hsize_t start[2] = {trial, 0}, count[2] = {1, store::kCurveSlots};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  const store::Hid memory = store::check(H5Screate_simple(2, count, nullptr), "memory");
  std::vector<store::CurvePoint> points(store::kCurveSlots);
  store::check_status(H5Dread(dataset, type, memory, space, H5P_DEFAULT, points.data()), "read");
  Row row;
  for (const auto& p : points) {
    row.step.push_back(p.step);
    row.value.push_back(p.value);
  }
  return row;
}

constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();

// What /curves must hold for a trial of `reports` reports: report m * stride in slot m
// (`lost`: a report whose point a flush that did not reach the file had, NaN).
void check_thinned(const Row& row, core::TrialId trial, std::uint64_t reports,
                   std::uint64_t lost = kNone) {
  const std::uint64_t stride = store::curve_stride(reports);
  const std::uint64_t kept = (reports + stride - 1) / stride;
  BOOST_TEST_CONTEXT("trial " << trial << ", " << reports << " reports, stride " << stride) {
    BOOST_TEST(kept <= store::kCurveSlots);
    BOOST_TEST((reports <= store::kCurveSlots || kept > store::kCurveSlots / 2));
    for (std::uint64_t m = 0; m < store::kCurveSlots; ++m) {
      if (m < kept && m * stride != lost) {
        const std::uint64_t i = m * stride;
        BOOST_TEST(row.step[m] == static_cast<float>(i));
        const double v = value_of(trial, i);
        BOOST_TEST(
            (std::isnan(v) ? std::isnan(row.value[m]) : row.value[m] == static_cast<float>(v)));
      } else {
        BOOST_TEST(std::isnan(row.step[m]));
      }
    }
  }
}

void report(store::StudyWriter& writer, core::TrialId trial, std::uint64_t i, std::uint64_t& seq,
            std::vector<std::pair<std::uint64_t, double>>& improvements, double& best) {
  const double v = value_of(trial, i);
  writer.report(trial, static_cast<double>(i), static_cast<double>(seq), std::vector<double>{v},
                {});
  if (!std::isnan(v) && (std::isnan(best) || v < best)) {
    best = v;
    improvements.emplace_back(seq, v);
  }
  ++seq;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_stride_doubles_when_the_slots_are_full) {
  BOOST_TEST(store::curve_stride(0) == 1u);
  BOOST_TEST(store::curve_stride(128) == 1u);
  BOOST_TEST(store::curve_stride(129) == 2u);
  BOOST_TEST(store::curve_stride(256) == 2u);
  BOOST_TEST(store::curve_stride(257) == 4u);
  BOOST_TEST(store::curve_stride(1'000'000'000) == 8'388'608u);
}

BOOST_AUTO_TEST_CASE(curves_and_improvements_equal_every_report_thinned_across_a_resume) {
  testing::TempFolder dir;
  const std::string path = dir.file("s.h5");
  store::WriterOptions options;
  options.virtual_clock = true;
  options.flush_interval_s = 0;  // a flush at every row: points reach the file one by one
  // Trials of 1, 128, 129, 300 and 1,000 reports; 1,000 goes through three thinnings.
  const std::vector<std::uint64_t> reports = {1, 128, 129, 300, 1000};
  std::uint64_t seq = 0;
  double best = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<std::uint64_t, double>> improvements;
  // Reports before the writer stops: 200, trial 3 129 (its last one made a thinning,
  // which the flush that does not reach /curves below loses).
  const auto first_part = [](core::TrialId t) -> std::uint64_t { return t == 3 ? 129 : 200; };
  {
    auto writer = store::StudyWriter::create(path, spec(), options);
    for (core::TrialId t = 0; t < reports.size(); ++t) {
      writer->trial_started(t, core::Configuration{{0.5}}, 0, static_cast<double>(seq));
      ++seq;  // the start event's seq
    }
    for (std::uint64_t i = 0; i < 200; ++i)
      for (core::TrialId t = 0; t < reports.size(); ++t)
        if (i < std::min(reports[t], first_part(t))) report(*writer, t, i, seq, improvements, best);
  }  // every trial still live: as a killed coordinator leaves them
  // The last flush reached /trials but not /curves: trial 3's row as it was before its
  // report 128 made the thinning (the first 128 reports at stride 1).
  {
    const store::Hid file = store::check(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "open");
    const store::Hid dataset = store::check(H5Dopen2(file, "curves", H5P_DEFAULT), "curves");
    const store::Hid type = point_type();
    std::vector<store::CurvePoint> points;
    for (std::uint64_t i = 0; i < store::kCurveSlots; ++i)
      points.push_back({static_cast<float>(i), static_cast<float>(value_of(3, i))});
    const store::Hid space = store::check(H5Dget_space(dataset), "space");
    const hsize_t start[2] = {3, 0}, count[2] = {1, store::kCurveSlots};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    const store::Hid memory = store::check(H5Screate_simple(2, count, nullptr), "memory");
    store::check_status(H5Dwrite(dataset, type, memory, space, H5P_DEFAULT, points.data()),
                        "write");
  }
  for (core::TrialId t = 0; t < reports.size(); ++t)
    if (t != 3) check_thinned(read_curve(path, t), t, std::min(reports[t], first_part(t)));
  {
    store::WriterPosition position{seq, {}};
    for (core::TrialId t = 0; t < reports.size(); ++t)
      position.live.emplace_back(t, store::TrialStatus::Running);
    auto writer = store::StudyWriter::reopen(path, spec(), options, position);
    for (std::uint64_t i = 129; i < 1000; ++i)
      for (core::TrialId t = 0; t < reports.size(); ++t)
        if (i >= first_part(t) && i < reports[t]) report(*writer, t, i, seq, improvements, best);
    for (core::TrialId t = 0; t < reports.size(); ++t)
      writer->trial_ended(t, core::TrialEnd::Completed, static_cast<double>(seq++));
  }
  // The resume made the thinning trial 3's row missed: only the lost report is absent.
  for (core::TrialId t = 0; t < reports.size(); ++t)
    check_thinned(read_curve(path, t), t, reports[t], t == 3 ? 128 : kNone);

  // /improvements: the reports that bettered the best so far, across both sessions.
  const store::Hid file = store::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open");
  const store::Hid dataset =
      store::check(H5Dopen2(file, "improvements", H5P_DEFAULT), "improvements");
  struct Improvement {
    std::uint64_t seq;
    double value;
  };
  const store::Hid type = store::check(H5Tcreate(H5T_COMPOUND, sizeof(Improvement)), "type");
  H5Tinsert(type, "seq", HOFFSET(Improvement, seq), H5T_NATIVE_UINT64);
  H5Tinsert(type, "value", HOFFSET(Improvement, value), H5T_NATIVE_DOUBLE);
  const store::Hid space = store::check(H5Dget_space(dataset), "space");
  hsize_t rows = 0;
  H5Sget_simple_extent_dims(space, &rows, nullptr);
  std::vector<Improvement> read(rows);
  store::check_status(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, read.data()), "read");
  BOOST_TEST_REQUIRE(read.size() == improvements.size());
  BOOST_TEST(improvements.size() > 3u);
  for (std::size_t k = 0; k < read.size(); ++k) {
    BOOST_TEST(read[k].seq == improvements[k].first);
    BOOST_TEST(read[k].value == improvements[k].second);
  }
}
