// Study-file figures (doc/performance.md):
//   build/tests/bench/bench_study_file ingest [ROWS]        rows/s into /metrics, bytes/row
//   build/tests/bench/bench_study_file resume [TRIALS] [STEPS]   reopen + rebuild time
// Files are written under $TMPDIR (default /tmp) and removed afterwards.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "config/study_file.hpp"
#include "core/random.hpp"
#include "core/simulation/simulation.hpp"
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

void ingest(std::uint64_t rows, int deflate) {
  const auto spec = four_metric_study();
  const std::string path = temp_path("slurmtune-ingest.h5");
  fs::remove(path);
  store::WriterOptions options;
  options.metrics_deflate = deflate;
  const core::TrialId trials = 1000;
  const auto start = std::chrono::steady_clock::now();
  {
    auto writer = store::StudyWriter::create(path, spec, options);
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
    writer->flush();
  }
  const double elapsed = seconds_since(start);
  const double bytes = static_cast<double>(fs::file_size(path));
  std::printf("ingest deflate=%-2d rows=%llu  %.2f s  %.0f rows/s  %.1f bytes/row (file %.1f MB)\n",
              deflate, static_cast<unsigned long long>(rows), elapsed,
              static_cast<double>(rows) / elapsed, bytes / static_cast<double>(rows), bytes / 1e6);
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
// `slurmtune run` does on a requeue.
void resume_file(const std::string& path) {
  for (int repeat = 0; repeat < 2; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    const store::StudyReader reader(path);
    const auto state = store::resume_study(reader, reader.spec(), {});
    std::printf("resume: reopen + rebuild %llu trials, %llu reports: %.2f s\n",
                static_cast<unsigned long long>(state.trials.size()),
                static_cast<unsigned long long>(state.reports_replayed), seconds_since(start));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "ingest";
  if (what == "ingest") {
    const std::uint64_t rows = argc > 2 ? std::stoull(argv[2]) : 5000000;
    for (const int deflate : {-1, 1, 4})
      ingest(rows, deflate);
  } else if (what == "resume") {
    resume(argc > 2 ? std::stoull(argv[2]) : 100000, argc > 3 ? std::stod(argv[3]) : 100);
  } else if (what == "resume-file" && argc > 2) {
    resume_file(argv[2]);
  } else {
    std::fprintf(stderr,
                 "usage: bench_study_file ingest [ROWS] | resume [TRIALS] [STEPS] | "
                 "resume-file RESULTS.h5\n");
    return 2;
  }
}
