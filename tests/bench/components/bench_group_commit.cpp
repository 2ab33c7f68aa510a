// The results file under a leadership-class load (issue #62): live trials with scattered
// ids, each reporting once a second, and rung crossings whose decisions wait for a group
// commit (StudyWriter::commit_ticket / durable_ticket), with the writer's flush thread
// as the coordinator runs it.
//   build/tests/bench/bench_group_commit [LIVE_TRIALS] [CROSSINGS_PER_S] [SECONDS] [SCHEMA]
//
// SCHEMA: of the results file (10: without schema 11's /curves and /improvements).
// (defaults 40000, 100, 60). Prints, for the flushes: how many, and the thread's time
// writing each (p50, p99, max); for the loop: flush_if_due's p99 and longest call; for
// the decisions: how long each waited for its commit; and the file's size. The file is written
// under $TMPDIR (default /tmp) and removed afterwards.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/study_file.hpp"
#include "core/random.hpp"
#include "store/study_writer.hpp"

using namespace slurmtune;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

core::StudySpec study() {
  return config::parse_study(R"(
[study]
name = "group-commit"
metric = "val_loss"
metrics = ["val_accuracy"]
[search]
lr = { loguniform = [1e-5, 1e-1] }
width = { randint = [16, 1024] }
[scheduler]
type = "asha_promotion"
grace_period = 1
max_t = 81
reduction_factor = 3
)",
                             "group-commit.toml");
}

// Trial ids of `live` trials scattered among four times as many: the others ended.
std::vector<core::TrialId> scattered_live(store::StudyWriter& writer, std::size_t live) {
  std::vector<core::TrialId> ids(4 * live);
  for (core::TrialId t = 0; t < ids.size(); ++t)
    ids[t] = t;
  core::Xoshiro256 rng(11);
  for (std::size_t i = ids.size() - 1; i > 0; --i)  // Fisher-Yates
    std::swap(ids[i], ids[static_cast<std::size_t>(rng.uniform01() * static_cast<double>(i + 1))]);
  std::vector<bool> keep(ids.size(), false);
  for (std::size_t i = 0; i < live; ++i)
    keep[ids[i]] = true;
  const core::Configuration config{{core::ParamValue{1e-3}, core::ParamValue{std::int64_t{64}}}};
  std::vector<core::TrialId> out;
  for (core::TrialId t = 0; t < keep.size(); ++t) {
    writer.trial_started(t, config, 0, 0.0);
    if (keep[t])
      out.push_back(t);
    else
      writer.trial_ended(t, core::TrialEnd::Stopped, 0.0);
  }
  writer.flush();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t live = argc > 1 ? std::stoull(argv[1]) : 40000;
  const double crossings_per_s = argc > 2 ? std::stod(argv[2]) : 100;
  const double seconds = argc > 3 ? std::stod(argv[3]) : 60;
  const std::int64_t schema = argc > 4 ? std::stoll(argv[4]) : store::kSchemaVersion;
  const char* dir = std::getenv("TMPDIR");
  const std::string path = (fs::path(dir ? dir : "/tmp") / "slurmtune-group-commit.h5").string();
  fs::remove(path);

  store::WriterOptions options;
  options.background_flush = true;  // as the coordinator writes
  options.schema_version = schema;
  auto writer = store::StudyWriter::create(path, study(), options);
  const auto trials = scattered_live(*writer, live);
  const auto size_before = fs::file_size(path);

  std::mutex mutex;
  std::vector<double> write_ms;  // each background flush: the thread's time writing it
  writer->on_durable([&](const store::StudyWriter::DurableCommit& commit) {
    const std::lock_guard lock(mutex);
    write_ms.push_back(commit.written_s * 1e3);
  });

  // The loop: reports spread evenly over each second, a rung crossing every
  // 1 / crossings_per_s seconds; each crossing's decision waits for its ticket.
  struct Waiting {
    std::uint64_t ticket;
    Clock::time_point since;
  };
  std::deque<Waiting> waiting;
  std::vector<double> wait_ms, take_ms;
  core::Xoshiro256 rng(5);
  std::vector<double> values(2);
  std::vector<double> step(trials.size(), 0);
  const auto begin = Clock::now();
  const double report_interval = 1.0 / static_cast<double>(trials.size());
  double next_report = 0, next_crossing = 0;
  std::size_t k = 0;
  std::uint64_t reports = 0, crossings = 0;
  while (true) {
    const double now = std::chrono::duration<double>(Clock::now() - begin).count();
    if (now >= seconds) break;
    for (; next_report <= now; next_report += report_interval, ++reports) {
      const std::size_t i = k++ % trials.size();
      step[i] += 1;
      values = {1.0 / step[i] + 0.01 * rng.uniform01(), rng.uniform01()};
      writer->report(trials[i], step[i], now, values, core::ReportOutcome{});
    }
    for (; next_crossing <= now; next_crossing += 1.0 / crossings_per_s, ++crossings) {
      waiting.push_back({writer->commit_ticket(), Clock::now()});
      writer->commit_soon();
    }
    const auto before = Clock::now();
    writer->flush_if_due();  // as the coordinator's loop does every turn
    take_ms.push_back(ms(Clock::now() - before));
    const auto durable = writer->durable_ticket();
    while (!waiting.empty() && waiting.front().ticket <= durable) {
      wait_ms.push_back(ms(Clock::now() - waiting.front().since));
      waiting.pop_front();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  writer->flush();
  const auto size_after = fs::file_size(path);
  writer.reset();
  const std::lock_guard lock(mutex);
  std::printf(
      "group commit: %zu live trials (ids scattered among %zu), %.0f rung crossings/s, %.0f s: "
      "%llu reports, %llu crossings\n",
      trials.size(), 4 * trials.size(), crossings_per_s, seconds,
      static_cast<unsigned long long>(reports), static_cast<unsigned long long>(crossings));
  std::printf(
      "flushes: %zu (%.1f/s); written on the thread in p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
      write_ms.size(), static_cast<double>(write_ms.size()) / seconds, percentile(write_ms, 0.5),
      percentile(write_ms, 0.99),
      write_ms.empty() ? 0 : *std::max_element(write_ms.begin(), write_ms.end()));
  std::printf("loop: flush_if_due p99 %.2f ms, longest %.1f ms\n", percentile(take_ms, 0.99),
              take_ms.empty() ? 0 : *std::max_element(take_ms.begin(), take_ms.end()));
  std::printf("decisions held for a commit: %zu; waited p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
              wait_ms.size(), percentile(wait_ms, 0.5), percentile(wait_ms, 0.99),
              wait_ms.empty() ? 0 : *std::max_element(wait_ms.begin(), wait_ms.end()));
  std::printf("file: %.1f MB after the trials started, %.1f MB at the end\n",
              static_cast<double>(size_before) / 1e6, static_cast<double>(size_after) / 1e6);
  fs::remove(path);
}
