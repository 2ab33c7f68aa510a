// Test helper: records a long simulated study into a results file, flushing every
// FLUSH_S seconds, and prints "flushed N" on stdout whenever N metric rows have become
// durable. The kill tests run it, SIGKILL it at a random moment, and check that the
// file opens and holds at least the last N announced.
//   killable_writer STUDY.toml OUT.h5 [FLUSH_S] [REPORTS_PER_S] [background|log]
// REPORTS_PER_S paces the writer (0, the default: as fast as it can), so that a test
// reading along sees a file of a manageable size; "background" flushes on the writer's
// flush thread, as the coordinator's does (a kill then lands mid-write as often); "log"
// does too, and every 50th report asks for a commit as a decision that asks for a
// checkpoint does, which the write-ahead log makes durable at once (OUT.h5-wal).
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "config/study_file.hpp"
#include "core/simulation/simulation.hpp"
#include "store/simulation_recorder.hpp"

using namespace slurmtune;

namespace {
class Announcer final : public core::SimulationObserver {
 public:
  Announcer(store::StudyWriter& writer, double reports_per_s, bool write_ahead)
      : writer_(writer), reports_per_s_(reports_per_s), write_ahead_(write_ahead) {}
  void reported(core::TrialId, double, const std::vector<double>&, const core::ReportOutcome&,
                double) override {
    ++reports_;
    if (reports_per_s_ > 0 && reports_ % 100 == 0) {
      const auto due =
          start_ + std::chrono::duration<double>(static_cast<double>(reports_) / reports_per_s_);
      std::this_thread::sleep_until(due);
    }
    if (write_ahead_ && reports_ % 50 == 0) {  // as the coordinator's loop does for a decision
      writer_.commit_soon();
      writer_.flush_if_due();
    }
    if (writer_.flushed_metric_rows() == last_) return;
    last_ = writer_.flushed_metric_rows();
    std::printf("flushed %llu\n", static_cast<unsigned long long>(last_));
    std::fflush(stdout);
  }

 private:
  store::StudyWriter& writer_;
  double reports_per_s_;
  bool write_ahead_;
  std::uint64_t reports_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::uint64_t last_ = 0;
};
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(
        stderr,
        "usage: killable_writer STUDY.toml OUT.h5 [FLUSH_S] [REPORTS_PER_S] [background|log]\n");
    return 2;
  }
  auto spec = config::load_study_file(argv[1]);
  spec.max_trials = 100000000;  // runs until killed
  store::WriterOptions options;
  options.virtual_clock = true;
  options.flush_interval_s = argc > 3 ? std::stod(argv[3]) : 0.01;
  const std::string mode = argc > 5 ? argv[5] : "foreground";
  options.background_flush = mode == "background" || mode == "log";
  options.write_ahead_log = mode == "log";
  auto writer = store::StudyWriter::create(argv[2], spec, options);
  Announcer announcer(*writer, argc > 4 ? std::stod(argv[4]) : 0.0, options.write_ahead_log);
  store::SimulationRecorder recorder(*writer, &announcer);
  core::SimulationOptions sim;
  sim.workers = 64;
  core::simulate_study(spec, sim, &recorder);
  return 0;
}
