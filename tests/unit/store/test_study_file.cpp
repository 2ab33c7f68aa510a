#define BOOST_TEST_MODULE store_study_file
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "config/study_file.hpp"
#include "core/error.hpp"
#include "core/simulation/simulation.hpp"
#include "core/study/scheduler_factory.hpp"
#include "store/file/hdf5.hpp"
#include "store/resume.hpp"
#include "store/simulation_recorder.hpp"
#include "store/study_reader.hpp"
#include "store/study_writer.hpp"
#include "unit/config/study_text.hpp"
#include "unit/store/simulated_study.hpp"
#include "unit/store/store_studies.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using slurmtune::testing::contains;
using slurmtune::testing::kStoreStudy;
using slurmtune::testing::pbt_store_study;
using slurmtune::testing::simulate_into;
using slurmtune::testing::store_study;
namespace fs = std::filesystem;

namespace {

// A fresh directory per test case, removed afterwards.
using TempDir = slurmtune::testing::TempFolder;

std::string error_of(const std::string& path) {
  try {
    store::StudyReader reader(path);
  } catch (const store::ResultsFileFormatError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_simulated_study_reads_back_completely) {
  TempDir dir;
  const auto s = store_study();
  const auto summary = simulate_into(dir.file("s.h5"), s);
  const store::StudyReader reader(dir.file("s.h5"));
  BOOST_TEST(reader.spec().name == "store-test");
  BOOST_TEST(reader.attribute("format") == "slurmtune-study");
  BOOST_TEST(reader.schema_version() == store::kSchemaVersion);
  BOOST_TEST(reader.attribute("study_file") == std::string(kStoreStudy));
  const auto trials = reader.trials();
  BOOST_TEST(trials.size() == 400U);
  std::uint64_t reports = 0, completed = 0;
  for (const auto& t : trials) {
    reports += t.reports;
    completed += t.status == store::TrialStatus::Completed;
    BOOST_REQUIRE(
        (t.status == store::TrialStatus::Completed || t.status == store::TrialStatus::Stopped));
  }
  BOOST_TEST(reports == summary.final.reports);
  BOOST_TEST(completed == summary.final.completed);
  BOOST_TEST(reader.metric_rows() == summary.final.reports);
  // Configurations are stored with their types and read back identically.
  const core::ConfigSampler sampler(s.space, s.sampler.kind, s.seed);
  for (const core::TrialId id : {0UL, 17UL, 399UL})
    BOOST_TEST(s.space.to_json(trials[id].config) == s.space.to_json(sampler.sample(id)));
  // The undeclared second metric column exists and holds NaN for simulated reports.
  std::uint64_t seen = 0;
  reader.for_each_metric([&](const store::MetricRecord& m) {
    BOOST_REQUIRE(m.values.size() == 2U);
    BOOST_REQUIRE(std::isnan(m.values[1]));
    ++seen;
  });
  BOOST_TEST(seen == summary.final.reports);
  BOOST_TEST(reader.sessions().size() == 1U);
  BOOST_TEST(!reader.events().empty());
}

BOOST_AUTO_TEST_CASE(parameter_columns_keep_their_types) {
  const store::StudyLayout layout(store_study());
  using Kind = store::ParamColumn::Kind;
  BOOST_TEST((layout.params[0].kind == Kind::Real));
  BOOST_TEST((layout.params[1].kind == Kind::Integer));
  BOOST_TEST((layout.params[2].kind == Kind::Category));
  BOOST_TEST((layout.params[3].kind == Kind::Bool));
  BOOST_TEST((layout.params[4].kind == Kind::Text));
}

BOOST_AUTO_TEST_CASE(never_overwrites_an_existing_file) {
  TempDir dir;
  const std::string path = dir.file("x.h5");
  std::ofstream(path) << "precious";
  BOOST_CHECK_THROW(store::StudyWriter::create(path, store_study(), {}), InputError);
  std::ifstream in(path);
  std::string text;
  in >> text;
  BOOST_TEST(text == "precious");
}

// Laid out under a hidden name and linked to its path once complete: nothing else is
// left in the folder, and a dead creator's leftover changes nothing.
BOOST_AUTO_TEST_CASE(a_new_file_is_published_whole_and_alone) {
  TempDir dir;
  char host[256] = {};  // a process of this PID on this host left one: its name is ours now
  gethostname(host, sizeof host - 1);
  std::ofstream(
      dir.file(".new.h5." + std::string(host) + "." + std::to_string(getpid()) + ".unpublished"))
      << "half made";
  store::StudyWriter::create(dir.file("new.h5"), store_study(), {}).reset();
  BOOST_TEST(store::StudyReader(dir.file("new.h5")).sessions().size() == 1U);
  std::ofstream(dir.file(".new2.h5.host.1.unpublished")) << "half made";
  simulate_into(dir.file("new2.h5"), store_study());
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    names.insert(entry.path().filename().string());
  BOOST_TEST(names == (std::set<std::string>{".new2.h5.host.1.unpublished", "new.h5", "new2.h5"}));
}

// Group commits (issue #62): a decision that must wait for rows to be durable asks for
// the flush that will hold them (commit_ticket) and waits until durable_ticket reaches
// it; the flush thread says so through on_durable, and a reader then sees the rows.
BOOST_AUTO_TEST_CASE(group_commits_are_numbered_and_say_when_they_are_durable) {
  for (const bool background : {true, false}) {
    BOOST_TEST_CONTEXT((background ? "flush thread" : "on the caller's thread")) {
      TempDir dir;
      const std::string path = dir.file("g.h5");
      store::WriterOptions options;
      options.flush_interval_s = 1e9;  // only asked-for commits
      options.background_flush = background;
      options.min_commit_gap_s = 0;  // at once (the gap: the test below)
      auto writer = store::StudyWriter::create(path, store_study(), options);
      std::mutex mutex;
      std::condition_variable signalled;
      int notices = 0;
      writer->on_durable([&](const store::StudyWriter::DurableCommit& commit) {
        BOOST_TEST(commit.written_s >= 0);
        const std::lock_guard lock(mutex);
        ++notices;
        signalled.notify_all();
      });
      const core::TrialId trial = 0;
      writer->trial_started(
          trial,
          core::Configuration{{core::ParamValue{0.01}, core::ParamValue{std::int64_t{32}},
                               core::ParamValue{"sgd"}, core::ParamValue{true},
                               core::ParamValue{"a"}}},
          0, 0);
      const std::vector<double> values{0.5, NAN};
      for (int step = 1; step <= 3; ++step)
        writer->report(trial, step, step, values, {});
      BOOST_TEST(!writer->flush_if_due());  // not due, not asked for
      const std::uint64_t ticket = writer->commit_ticket();
      BOOST_TEST(writer->durable_ticket() < ticket);
      writer->commit_soon();
      if (background) {
        BOOST_TEST(writer->durable_ticket() < ticket);  // asked for, not yet taken
        BOOST_TEST(writer->flush_if_due());
        std::unique_lock lock(mutex);
        // Bounded: a flush of three rows that never ends fails the test, not the run.
        BOOST_REQUIRE(signalled.wait_for(lock, std::chrono::seconds(60),
                                         [&] { return writer->durable_ticket() >= ticket; }));
        BOOST_TEST(notices == 1);
      } else {
        BOOST_TEST(writer->durable_ticket() >= ticket);  // flushed at once
        BOOST_TEST(notices == 0);                        // only the flush thread calls it
      }
      // Rows reported after the ticket was taken belong to the next flush.
      writer->report(trial, 4, 4, values, {});
      BOOST_TEST(writer->commit_ticket() == writer->durable_ticket() + 1);
      BOOST_TEST(store::StudyReader(path).metric_rows() == 3U);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_undeclared_metric_is_refused_by_name) {
  TempDir dir;
  auto writer = store::StudyWriter::create(dir.file("m.h5"), store_study(), {});
  writer->trial_started(
      0, core::Configuration{{0.01, std::int64_t{32}, std::string("sgd"), true, std::string("a")}},
      0, 0);
  writer->report_named(0, 1, 0, {{"loss", 0.5}, {"accuracy", 0.8}}, {});
  try {
    writer->report_named(0, 2, 0, {{"val_acc", 0.5}}, {});
    BOOST_ERROR("accepted an undeclared metric");
  } catch (const InputError& e) {
    BOOST_TEST(contains(e.what(), "reported metric 'val_acc', which the study does not declare"));
  }
}

BOOST_AUTO_TEST_CASE(bad_files_get_clear_errors) {
  TempDir dir;
  std::ofstream(dir.file("text.h5")) << "hello, not hdf5\n";
  BOOST_TEST(contains(error_of(dir.file("text.h5")), "not an HDF5 file"));
  BOOST_TEST(contains(error_of(dir.file("missing.h5")), "no such file"));

  store::quiet_hdf5_errors();
  {
    store::Hid plain(
        H5Fcreate(dir.file("plain.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  }
  BOOST_TEST(contains(error_of(dir.file("plain.h5")), "not a slurmtune results file"));

  simulate_into(dir.file("good.h5"), store_study());
  const auto size = fs::file_size(dir.file("good.h5"));
  fs::copy_file(dir.file("good.h5"), dir.file("cut.h5"));
  fs::resize_file(dir.file("cut.h5"), size / 2);
  BOOST_TEST(contains(error_of(dir.file("cut.h5")), "truncated"));

  fs::copy_file(dir.file("good.h5"), dir.file("newer.h5"));
  {
    store::Hid file(H5Fopen(dir.file("newer.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    BOOST_REQUIRE(file.valid());
    store::write_int_attribute(file, "schema_version", 99);
  }
  BOOST_TEST(contains(error_of(dir.file("newer.h5")), "written with results-file schema 99"));
}

BOOST_AUTO_TEST_CASE(compare_studies_separates_safe_from_unsafe_changes) {
  const auto before = store_study();
  auto after = store_study();
  after.max_trials = 800;
  after.scheduler.reduction_factor = 4;
  const auto diffs = store::compare_studies(before, after);
  BOOST_REQUIRE(diffs.size() == 2U);
  for (const auto& d : diffs) {
    if (d.key == "study.max_trials")
      BOOST_TEST(d.safe);
    else
      BOOST_TEST((d.key == "scheduler.reduction_factor" && !d.safe));
  }
}

BOOST_AUTO_TEST_CASE(resume_refuses_a_changed_search_space_and_says_what_changed) {
  TempDir dir;
  simulate_into(dir.file("r.h5"), store_study());
  const store::StudyReader reader(dir.file("r.h5"));
  auto changed = config::parse_study(std::string(kStoreStudy) + "\n", "new.toml");
  changed.space =
      config::parse_study(
          "[study]\nname='x'\nmetric='loss'\n[search]\nlr = { loguniform = [1e-5, 1e-1] }\n", "x")
          .space;
  try {
    store::resume_study(reader, changed, {});
    BOOST_ERROR("resumed a different search space");
  } catch (const InputError& e) {
    BOOST_TEST(contains(e.what(),
                        "search.lr: { loguniform = [ 0.0001, 0.1 ] } recorded, { loguniform = [ "
                        "1e-05, 0.1 ] } now"));
    BOOST_TEST(
        contains(e.what(), "search.width: { randint = [ 16, 256 ] } recorded, (absent) now"));
  }
  auto larger = store_study();
  larger.max_trials = 1000;
  BOOST_CHECK_THROW(store::resume_study(reader, larger, {}), InputError);
  BOOST_CHECK_NO_THROW(store::resume_study(reader, larger, {true}));
}

// The heart of resume: a scheduler rebuilt from a file cut at any point decides the rest
// of the study exactly as the uninterrupted run did.
BOOST_AUTO_TEST_CASE(a_resumed_scheduler_makes_the_same_decisions) {
  for (const char* scheduler : {"asha", "asha_promotion", "hyperband", "median"}) {
    BOOST_TEST_CONTEXT(scheduler) {
      TempDir dir;
      auto s = store_study("");
      s.scheduler.type = *core::scheduler_type_from_keyword(scheduler);
      s.max_trials = 150;
      simulate_into(dir.file("full.h5"), s);
      const store::StudyReader full(dir.file("full.h5"));
      // Every operation of the full run in sequence order, with each report's recorded
      // decision (from the event that follows it, if any).
      struct Op {
        std::uint64_t seq;
        const store::EventRecord* event;
        store::MetricRecord report;
      };
      std::vector<Op> ops;
      const auto events = full.events();
      std::size_t e = 0;
      full.for_each_metric([&](const store::MetricRecord& m) {
        while (e < events.size() && events[e].seq < m.seq)
          ops.push_back({events[e].seq, &events[e], {}}), ++e;
        ops.push_back({m.seq, nullptr, m});
      });
      while (e < events.size())
        ops.push_back({events[e].seq, &events[e], {}}), ++e;
      const auto decision_after = [&](std::size_t i) {
        if (i + 1 < ops.size() && ops[i + 1].event &&
            ops[i + 1].event->trial == ops[i].report.trial) {
          const auto kind = ops[i + 1].event->kind;
          if (kind == store::EventKind::Stop) return core::SchedulerDecision::Stop;
          if (kind == store::EventKind::Pause) return core::SchedulerDecision::Pause;
        }
        return core::SchedulerDecision::Continue;
      };
      // Cut the run a third of the way: write that prefix into its own file.
      const std::size_t cut = ops.size() / 3;
      {
        auto writer = store::StudyWriter::create(dir.file("prefix.h5"), s, {});
        const core::ConfigSampler sampler(s.space, s.sampler.kind, s.seed);
        auto twin = core::make_scheduler(s.scheduler, s.mode, s.seed, s.name);
        for (std::size_t i = 0; i < cut; ++i) {
          const Op& op = ops[i];
          if (!op.event) {
            const auto outcome = twin->report(op.report.trial, op.report.step, op.report.values[0]);
            writer->report(op.report.trial, op.report.step, 0, op.report.values, outcome);
            continue;
          }
          const auto& ev = *op.event;
          if (ev.kind == store::EventKind::Start) {
            twin->add_trial(ev.trial, std::nullopt);
            writer->trial_started(ev.trial, sampler.sample(ev.trial), twin->bracket_of(ev.trial),
                                  0);
          } else if (ev.kind == store::EventKind::Resume) {
            twin->next_job(false);
            writer->trial_resumed(ev.trial, 0, nullptr);
          } else if (ev.kind == store::EventKind::Closed) {
            twin->close_admissions();
            writer->admissions_closed(0);
          } else if (const auto how = store::trial_end_of(ev.kind)) {
            twin->end_trial(ev.trial, *how, core::Observation{ev.step, ev.value});
            twin->take_dropped();
            writer->trial_ended(ev.trial, *how, 0);
          }
        }
      }
      const store::StudyReader prefix(dir.file("prefix.h5"));
      auto state = store::resume_study(prefix, s, {});
      std::size_t checked = 0;
      for (std::size_t i = cut; i < ops.size(); ++i) {
        const Op& op = ops[i];
        if (!op.event) {
          const auto outcome =
              state.scheduler->report(op.report.trial, op.report.step, op.report.values[0]);
          BOOST_REQUIRE_MESSAGE(outcome.decision == decision_after(i),
                                "seq " << op.seq << " trial " << op.report.trial);
          ++checked;
          continue;
        }
        const auto& ev = *op.event;
        if (ev.kind == store::EventKind::Start) state.scheduler->add_trial(ev.trial, std::nullopt);
        if (ev.kind == store::EventKind::Closed) state.scheduler->close_admissions();
        if (ev.kind == store::EventKind::Resume) {
          const auto job = state.scheduler->next_job(false);
          BOOST_REQUIRE(job);
          BOOST_REQUIRE(job->trial == ev.trial);
        }
        if (const auto how = store::trial_end_of(ev.kind)) {
          state.scheduler->end_trial(ev.trial, *how, core::Observation{ev.step, ev.value});
          state.scheduler->take_dropped();
        }
      }
      BOOST_TEST(checked > 100U);
    }
  }
}

// Runs the killable_writer helper, SIGKILLs it after `delay`, and returns the number of
// metric rows it announced as durable (flushed) before it died.
namespace {
std::uint64_t run_and_kill(const std::string& path, std::chrono::milliseconds delay,
                           const std::string& mode) {
  int out[2];
  BOOST_REQUIRE(pipe(out) == 0);
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {  // a separate program, as a real coordinator would be
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    // With the log, HDF5 commits every 0.2 s: most rows announced lie in the log alone.
    execl(KILLABLE_WRITER, KILLABLE_WRITER, EXAMPLE_STUDY, path.c_str(),
          mode == "log" ? "0.2" : "0.01", "0", mode.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  const auto deadline = std::chrono::steady_clock::now() + delay;
  std::string text;
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    const ssize_t n = read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(n));
  close(out[0]);
  const auto last = text.rfind("flushed ");
  return last == std::string::npos ? 0 : std::stoull(text.substr(last + 8));
}
}  // namespace

// Commits asked for start no closer together than min_commit_gap_s, and the writer says
// how long the one asked for has to wait (the loop sleeps no longer than that).
BOOST_AUTO_TEST_CASE(asked_for_commits_keep_their_gap_and_say_when_they_are_due) {
  TempDir dir;
  store::WriterOptions options;
  options.flush_interval_s = 1e9;
  options.background_flush = true;
  options.min_commit_gap_s = 0.2;
  auto writer = store::StudyWriter::create(dir.file("gap.h5"), store_study(), options);
  BOOST_TEST(!writer->commit_due_in_s().has_value());  // none asked for
  writer->commit_soon();
  const auto due = writer->commit_due_in_s();  // the create's own flush was just now
  BOOST_REQUIRE(due.has_value());
  BOOST_TEST(*due > 0);
  BOOST_TEST(*due <= 0.2);
  BOOST_TEST(!writer->flush_if_due());
  // Bounded: the gap passes in 0.2 s; a minute means it never does.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (writer->commit_due_in_s() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  BOOST_TEST(!writer->commit_due_in_s().has_value());
  BOOST_TEST(writer->flush_if_due());
  options.background_flush = false;  // on the caller's thread a commit asked for is made at once
  auto direct = store::StudyWriter::create(dir.file("direct.h5"), store_study(), options);
  const std::uint64_t ticket = direct->commit_ticket();
  direct->commit_soon();
  BOOST_TEST(direct->durable_ticket() >= ticket);
  BOOST_TEST(!direct->commit_due_in_s().has_value());
}

// H5Fstart_swmr_write leaves the datasets open then with the file's default chunk cache
// of 1 MiB (HDF5 issue #1730): /trials' and /curves' chunks would be written whole at
// every flush for one changed row. The writer opens them again without a cache, new and
// resumed, so that their changed rows are written in place.
BOOST_AUTO_TEST_CASE(rewritten_tables_keep_no_chunk_cache_in_swmr_mode) {
  TempDir dir;
  const std::string path = dir.file("cache.h5");
  store::WriterOptions options;
  options.background_flush = false;
  {
    auto writer = store::StudyWriter::create(path, store_study(), options);
    BOOST_TEST(writer->trials_chunk_cache_bytes() == 0U);
    BOOST_REQUIRE(writer->curves_chunk_cache_bytes().has_value());
    BOOST_TEST(*writer->curves_chunk_cache_bytes() == 0U);
  }
  auto writer = store::StudyWriter::reopen(path, store_study(), options, {});
  BOOST_TEST(writer->trials_chunk_cache_bytes() == 0U);
  BOOST_REQUIRE(writer->curves_chunk_cache_bytes().has_value());
  BOOST_TEST(*writer->curves_chunk_cache_bytes() == 0U);
}

// A file written before 2026-11-29 has a compressed /trials (made here by replacing the
// table with an empty compressed one): a changed row costs its chunk's deflate whatever
// the writer does, so a resumed writer keeps the chunks in a cache of its own instead of
// writing rows in place, which would read each chunk back and inflate it at every flush.
BOOST_AUTO_TEST_CASE(a_compressed_trial_table_keeps_a_chunk_cache_when_resumed) {
  TempDir dir;
  const std::string path = dir.file("compressed.h5");
  store::WriterOptions options;
  options.background_flush = false;
  store::StudyWriter::create(path, store_study(), options).reset();
  {
    const store::Hid file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    const store::Hid type = [&] {
      const store::Hid plain(H5Dopen2(file, "trials", H5P_DEFAULT));
      return store::Hid(H5Tcopy(store::Hid(H5Dget_type(plain))));
    }();
    BOOST_REQUIRE(H5Ldelete(file, "trials", H5P_DEFAULT) >= 0);
    const hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = 1024;
    const store::Hid space(H5Screate_simple(1, &zero, &unlimited));
    const store::Hid create(H5Pcreate(H5P_DATASET_CREATE));
    BOOST_REQUIRE(H5Pset_chunk(create, 1, &chunk) >= 0);
    BOOST_REQUIRE(H5Pset_shuffle(create) >= 0);
    BOOST_REQUIRE(H5Pset_deflate(create, 4) >= 0);
    BOOST_REQUIRE(
        store::Hid(H5Dcreate2(file, "trials", type, space, H5P_DEFAULT, create, H5P_DEFAULT)) >= 0);
  }
  auto writer = store::StudyWriter::reopen(path, store_study(), options, {});
  BOOST_TEST(writer->trials_chunk_cache_bytes() == std::size_t{64} << 20);
  BOOST_REQUIRE(writer->curves_chunk_cache_bytes().has_value());
  BOOST_TEST(*writer->curves_chunk_cache_bytes() == 0U);
  writer->flush();
}

BOOST_AUTO_TEST_CASE(a_killed_writer_leaves_a_readable_resumable_file) {
  TempDir dir;
  auto s = config::load_study_file(EXAMPLE_STUDY);
  s.max_trials = 100000000;  // what killable_writer runs
  std::mt19937 rng(42);
  // Rounds flush on the caller's thread, on the writer's flush thread, and on it with a
  // write-ahead log, as the coordinator's writer does; a log is applied before the reader
  // opens the file, as a resume does.
  const std::string modes[] = {"foreground", "background", "log"};
  for (int round = 0; round < 9; ++round) {
    const std::string path = dir.file("killed" + std::to_string(round) + ".h5");
    const std::string& mode = modes[round % 3];
    const std::uint64_t durable = run_and_kill(
        path, std::chrono::milliseconds(std::uniform_int_distribution<int>(150, 600)(rng)), mode);
    BOOST_TEST_CONTEXT("round " << round << " (" << mode << "), " << durable << " rows announced") {
      BOOST_TEST(durable > 0U);
      BOOST_TEST(fs::exists(path + "-wal") == (mode == "log"));
      if (mode == "log") {
        const auto applied = store::StudyWriter::apply_log(path);
        BOOST_REQUIRE(applied.has_value());
        BOOST_TEST_MESSAGE(*applied);
      }
      store::WriterPosition position;
      {
        const store::StudyReader reader(path);  // opens despite the crash
        BOOST_TEST(reader.metric_rows() >= durable);
        const auto state = store::resume_study(reader, s, {});
        BOOST_TEST(state.reports_replayed >= durable);
        BOOST_TEST(!state.unfinished.empty());
        position = {state.next_seq, state.live};
      }  // a writer cannot open the file while this process still reads it
      // Reopening for writing clears the crashed writer's flags; after a clean close
      // the file opens even without SWMR.
      store::StudyWriter::reopen(path, s, {}, position).reset();
      store::Hid plain(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
      BOOST_TEST(plain.valid());
    }
  }
}

BOOST_AUTO_TEST_CASE(exploits_are_recorded_in_order_with_their_configurations) {
  TempDir dir;
  const auto s = pbt_store_study();
  // What the simulator saw, to compare with what the file holds.
  struct Seen : core::SimulationObserver {
    std::vector<std::pair<core::TrialId, core::Exploit>> exploits;
    void trial_exploited(core::TrialId t, const core::Exploit& e, double) override {
      exploits.emplace_back(t, e);
    }
  } seen;
  simulate_into(dir.file("pbt.h5"), s, 4, store::kSchemaVersion, &seen);
  const store::StudyReader reader(dir.file("pbt.h5"));
  const auto exploits = reader.exploits();
  BOOST_REQUIRE(!seen.exploits.empty());
  BOOST_REQUIRE(exploits.size() == seen.exploits.size());
  for (std::size_t i = 0; i < exploits.size(); ++i) {
    const auto& [trial, e] = seen.exploits[i];
    BOOST_TEST(exploits[i].trial == trial);
    BOOST_TEST(exploits[i].donor == e.donor);
    BOOST_TEST(exploits[i].donor_step == e.donor_step);
    BOOST_TEST(exploits[i].step == e.step);
    BOOST_TEST(exploits[i].operations == e.operations);
    BOOST_TEST(s.space.to_json(exploits[i].config) == s.space.to_json(e.config));
    if (i > 0) BOOST_TEST(exploits[i].seq > exploits[i - 1].seq);
  }
  BOOST_TEST(reader.committed().exploits == exploits.size());
}
