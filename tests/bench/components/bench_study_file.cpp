// Study-file figures (doc/performance.md):
//   build/tests/bench/bench_study_file ingest [ROWS]        rows/s into /metrics, bytes/row
//   build/tests/bench/bench_study_file resume [TRIALS] [STEPS]   reopen + rebuild time
//   build/tests/bench/bench_study_file ingest-snapshots [ROWS]  the same with snapshots
//   build/tests/bench/bench_study_file resume-file RESULTS.h5 [--whole]   the same of a file
//   build/tests/bench/bench_study_file snapshot-file RESULTS.h5 FRACTION  write a snapshot
// Files are written under $TMPDIR (default /tmp) and removed afterwards.
#include <hdf5.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/study_file.hpp"
#include "core/random.hpp"
#include "core/simulation/simulation.hpp"
#include "store/decision_replay.hpp"
#include "store/file/snapshot_slots.hpp"
#include "store/resume.hpp"
#include "store/simulation_recorder.hpp"
#include "store/study_writer.hpp"

using namespace slurmtune;
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return (fs::path(dir ? dir : "/tmp") / name).string();
}

core::StudySpec four_metric_study() {
  return config::parse_study(R"(
[study]
name = "ingest"
metric = "val_loss"
metrics = ["val_accuracy", "train_loss", "lr"]
[search]
x = { uniform = [0, 1] }
[scheduler]
type = "fifo"
max_t = 1000000
)",
                             "ingest.toml");
}

// With `snapshots`, the writer keeps decision snapshots as `slurmtune run`'s does (its
// replay of every row, a snapshot every second); with `background`, flushes go to the
// writer's flush thread, as in `run`: the time is then the caller's (the loop's).
// `schema`: of the file (10: no /curves nor /improvements).
void ingest(std::uint64_t rows, int deflate, bool snapshots = false, bool background = false,
            std::int64_t schema = store::kSchemaVersion) {
  const auto spec = four_metric_study();
  const std::string path = temp_path("slurmtune-ingest.h5");
  fs::remove(path);
  store::WriterOptions options;
  options.metrics_deflate = deflate;
  if (snapshots) options.snapshot_interval_s = 1;
  options.background_flush = background;
  options.schema_version = schema;
  const core::TrialId trials = 1000;
  const auto start = std::chrono::steady_clock::now();
  double caller_s = 0;
  {
    auto writer = store::StudyWriter::create(path, spec, options);
    if (snapshots)
      writer->keep_decision_snapshots(
          std::make_unique<store::DecisionReplay>(spec, spec, path), -1,
          [](const std::string& why) { std::fprintf(stderr, "%s\n", why.c_str()); });
    core::Configuration config{{0.5}};
    for (core::TrialId t = 0; t < trials; ++t)
      writer->trial_started(t, config, 0, 0.0);
    const core::ReportOutcome outcome;
    std::vector<double> values(4);
    core::Xoshiro256 noise(1);  // real metrics are noisy: smooth values would flatter deflate
    for (std::uint64_t i = 0; i < rows; ++i) {
      const auto step = static_cast<double>(i / trials);
      values = {1.0 / (step + 1) + 0.01 * noise.uniform01(), 0.5 + 0.1 * noise.uniform01(),
                0.9 / (step + 2) + 0.01 * noise.uniform01(), 1e-3};
      writer->report(i % trials, step, static_cast<double>(i) * 1e-3, values, outcome);
    }
    caller_s = seconds_since(start);  // before the last flush waits for the flush thread
    writer->flush();
  }
  const double elapsed = seconds_since(start);
  const double bytes = static_cast<double>(fs::file_size(path));
  std::printf(
      "ingest deflate=%-2d schema %lld%s%s rows=%llu  %.2f s  %.0f rows/s (%.0f/s on the caller's "
      "thread)  %.1f bytes/row (file %.1f MB)\n",
      deflate, static_cast<long long>(schema), snapshots ? " snapshots" : "",
      background ? " background" : "", static_cast<unsigned long long>(rows), elapsed,
      static_cast<double>(rows) / elapsed, static_cast<double>(rows) / caller_s,
      bytes / static_cast<double>(rows), bytes / 1e6);
  fs::remove(path);
}

void resume(std::uint64_t trials, double steps) {
  auto spec = config::parse_study(R"(
[study]
name = "resume"
metric = "loss"
seed = 5
[search]
lr = { loguniform = [1e-4, 1e-1] }
width = { randint = [16, 512] }
opt = { choice = ["sgd", "adam"] }
[scheduler]
type = "fifo"
)",
                                  "resume.toml");
  spec.max_trials = trials;
  spec.scheduler.max_t = steps;
  const std::string path = temp_path("slurmtune-resume.h5");
  fs::remove(path);
  auto start = std::chrono::steady_clock::now();
  {
    store::WriterOptions options;
    options.virtual_clock = true;
    auto writer = store::StudyWriter::create(path, spec, options);
    store::SimulationRecorder recorder(*writer);
    core::SimulationOptions sim;
    sim.workers = 256;
    core::simulate_study(spec, sim, &recorder);
  }
  std::printf("resume: wrote %llu trials x %.0f steps in %.1f s (%.1f MB)\n",
              static_cast<unsigned long long>(trials), steps, seconds_since(start),
              static_cast<double>(fs::file_size(path)) / 1e6);
  for (int repeat = 0; repeat < 3; ++repeat) {
    start = std::chrono::steady_clock::now();
    const store::StudyReader reader(path);
    const auto state = store::resume_study(reader, spec, {});
    std::printf("resume: reopen + rebuild %llu trials, %llu reports: %.2f s\n",
                static_cast<unsigned long long>(state.trials.size()),
                static_cast<unsigned long long>(state.reports_replayed), seconds_since(start));
  }
  fs::remove(path);
}

// Reopens an existing results file (a `simulate -o` study) and rebuilds its state, as
// `slurmtune run` does on a requeue: from its decision snapshot, if it has one, unless
// `whole`.
void resume_file(const std::string& path, bool whole) {
  for (int repeat = 0; repeat < 2; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    const store::StudyReader reader(path);
    store::ResumeOptions options;
    options.use_snapshots = !whole;
    const auto state = store::resume_study(reader, reader.spec(), options);
    std::printf("resume: reopen + rebuild %llu trials, %llu reports replayed%s: %.2f s\n",
                static_cast<unsigned long long>(state.trials.size()),
                static_cast<unsigned long long>(state.reports_replayed),
                state.snapshot_seq
                    ? (" after the snapshot at seq " + std::to_string(*state.snapshot_seq)).c_str()
                    : "",
                seconds_since(start));
  }
}

// Writes into an existing results file the decision snapshot `slurmtune run` would have
// written once the first `fraction` of its rows were recorded (slot a).
void snapshot_file(const std::string& path, double fraction) {
  const auto start = std::chrono::steady_clock::now();
  std::string bytes;
  {
    const store::StudyReader reader(path);
    const auto& spec = reader.spec();
    store::DecisionReplay replay(spec, spec, path);
    for (const auto& s : reader.sessions())
      replay.add_session(s.first_seq);
    const auto trials = reader.trials();
    const auto cut =
        static_cast<std::uint64_t>(fraction * static_cast<double>(reader.committed().next_seq));
    reader.for_each_in_seq_order(
        reader.events(),
        [&](const store::EventRecord& e) {
          if (e.seq < cut)
            replay.event(e, e.trial < trials.size() ? &trials[e.trial].config : nullptr);
        },
        [&](const store::MetricRecord& m) {
          if (m.seq < cut) replay.metric(m);
        });
    const auto written = std::chrono::steady_clock::now();
    bytes = replay.snapshot();
    std::printf("snapshot: written out and hashed in %.1f ms\n", 1e3 * seconds_since(written));
  }
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) throw std::runtime_error("cannot open " + path + " for writing");
  store::create_snapshot_slots(file);
  store::write_snapshot_slot(file, 0, bytes);
  H5Fclose(file);
  std::printf("snapshot: %zu bytes at %.0f %% of the rows, written in %.1f s\n", bytes.size(),
              100 * fraction, seconds_since(start));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "ingest";
  if (what == "ingest") {
    const std::uint64_t rows = argc > 2 ? std::stoull(argv[2]) : 5000000;
    for (const int deflate : {-1, 1, 4})
      ingest(rows, deflate);
  } else if (what == "ingest-snapshots") {
    const std::uint64_t rows = argc > 2 ? std::stoull(argv[2]) : 5000000;
    for (int repeat = 0; repeat < 2; ++repeat)
      for (const bool background : {false, true}) {
        ingest(rows, 1, false, background);
        ingest(rows, 1, true, background);
      }
  } else if (what == "ingest-curves") {  // schema 11's /curves and /improvements, and not
    const std::uint64_t rows = argc > 2 ? std::stoull(argv[2]) : 5000000;
    for (int repeat = 0; repeat < 2; ++repeat)
      for (const bool background : {false, true})
        for (const std::int64_t schema : {std::int64_t{10}, store::kSchemaVersion})
          ingest(rows, 1, false, background, schema);
  } else if (what == "resume") {
    resume(argc > 2 ? std::stoull(argv[2]) : 100000, argc > 3 ? std::stod(argv[3]) : 100);
  } else if (what == "resume-file" && argc > 2) {
    resume_file(argv[2], argc > 3 && std::string(argv[3]) == "--whole");
  } else if (what == "snapshot-file" && argc > 3) {
    snapshot_file(argv[2], std::stod(argv[3]));
  } else {
    std::fprintf(
        stderr,
        "usage: bench_study_file ingest [ROWS] | ingest-snapshots [ROWS] | ingest-curves [ROWS] | "
        "resume [TRIALS] [STEPS] | "
        "resume-file RESULTS.h5 [--whole] | snapshot-file RESULTS.h5 FRACTION\n");
    return 2;
  }
}
