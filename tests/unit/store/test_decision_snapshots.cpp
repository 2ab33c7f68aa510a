// Decision snapshots in the results file (issue #63): a resume that starts from one makes
// the state a replay of every row makes, for every scheduler and sampler; a snapshot cut
// anywhere in the rows and replayed on from there ends where the whole replay ends; a
// torn or foreign snapshot is passed over, never used.
#define BOOST_TEST_MODULE decision_snapshots
#include <hdf5.h>

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "config/study_file.hpp"
#include "core/simulation/simulation.hpp"
#include "core/study/decision_state.hpp"
#include "store/decision_replay.hpp"
#include "store/file/snapshot_slots.hpp"
#include "store/resume.hpp"
#include "store/simulation_recorder.hpp"
#include "store/study_reader.hpp"
#include "store/study_writer.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;

namespace {

core::StudySpec study(const std::string& lines, int max_trials = 40) {
  return config::parse_study("[study]\nname = \"snap\"\nseed = 11\nmax_trials = " +
                                 std::to_string(max_trials) + "\n" + lines + R"(
[search]
lr = { loguniform = [1e-4, 1e-1] }
width = { randint = [16, 512] }
opt = { choice = ["sgd", "adam"] }
[simulate]
objective = "bowl"
noise = 0.05
)",
                             "snap.toml");
}

const std::string kAsha =
    "[scheduler]\ntype = \"asha\"\ngrace_period = 1\nreduction_factor = 3\nmax_t = 27\n";

// The study simulated into `path` by a writer that snapshots at every flush (and flushes
// at every row).
void simulate_into(const std::string& path, const core::StudySpec& spec) {
  store::WriterOptions options;
  options.virtual_clock = true;
  options.flush_interval_s = 0;
  options.snapshot_interval_s = 1e-9;
  auto writer = store::StudyWriter::create(path, spec, options);
  writer->keep_decision_snapshots(std::make_unique<store::DecisionReplay>(spec, spec, path), -1,
                                  [](const std::string& why) { BOOST_FAIL(why); });
  store::SimulationRecorder recorder(*writer);
  core::SimulationOptions simulation;
  simulation.workers = 4;
  core::simulate_study(spec, simulation, &recorder);
}

std::string state_of(const store::ResumeState& s) {
  return core::save_decision_state(*s.scheduler, *s.suggester);
}

// What a resume from the snapshot and one from the first row agree on.
void check_same_resume(const store::ResumeState& whole, const store::ResumeState& from) {
  BOOST_TEST(state_of(from) == state_of(whole));
  BOOST_TEST(from.next_seq == whole.next_seq);
  BOOST_TEST(from.reports_replayed <= whole.reports_replayed);  // the rows after the snapshot
  BOOST_TEST(from.last_step == whole.last_step);
  BOOST_TEST(from.awaited_checkpoints == whole.awaited_checkpoints);
  BOOST_TEST(from.exploits.size() == whole.exploits.size());
  BOOST_TEST(from.live == whole.live);
  BOOST_TEST(from.unfinished == whole.unfinished);
}

// The rows of the file replayed whole, with the snapshot at each of `cuts` (row counts).
std::vector<std::string> replay_whole(const store::StudyReader& reader, const core::StudySpec& spec,
                                      const std::vector<std::uint64_t>& cuts, std::string& end) {
  store::DecisionReplay replay(reader.spec(), spec, reader.path());
  for (const auto& s : reader.sessions())
    replay.add_session(s.first_seq);
  const auto trials = reader.trials();
  std::vector<std::string> at_cuts;
  std::uint64_t rows = 0;
  const auto cut = [&] {
    if (at_cuts.size() < cuts.size() && rows == cuts[at_cuts.size()])
      at_cuts.push_back(replay.snapshot());
    ++rows;
  };
  reader.for_each_in_seq_order(
      reader.events(),
      [&](const store::EventRecord& e) {
        cut();
        replay.event(e, e.trial < trials.size() ? &trials[e.trial].config : nullptr);
      },
      [&](const store::MetricRecord& m) {
        cut();
        replay.metric(m);
      });
  end = replay.snapshot();
  return at_cuts;
}

void check_study(const core::StudySpec& spec) {
  testing::TempFolder folder;
  const std::string path = folder.file("snap.h5");
  simulate_into(path, spec);
  const store::StudyReader reader(path);
  BOOST_REQUIRE_EQUAL(reader.decision_snapshots().size(), 2u);

  store::ResumeOptions whole_options;
  whole_options.use_snapshots = false;
  const auto whole = store::resume_study(reader, spec, whole_options);
  BOOST_TEST(!whole.snapshot_seq);
  const auto from_snapshot = store::resume_study(reader, spec, {});
  BOOST_TEST_REQUIRE(from_snapshot.snapshot_seq.has_value());
  BOOST_TEST(*from_snapshot.snapshot_seq == whole.next_seq);  // the last flush's
  BOOST_TEST(from_snapshot.snapshot_note.empty());
  BOOST_TEST(from_snapshot.reports_replayed == 0u);
  check_same_resume(whole, from_snapshot);

  // Cut anywhere: loaded and replayed on from there, the replay ends where the whole does.
  std::uint64_t rows = 0;
  reader.for_each_in_seq_order(
      reader.events(), [&](const store::EventRecord&) { ++rows; },
      [&](const store::MetricRecord&) { ++rows; });
  const std::vector<std::uint64_t> cuts = {rows / 5, rows / 2, rows - rows / 7};
  std::string end;
  const auto at_cuts = replay_whole(reader, spec, cuts, end);
  BOOST_REQUIRE_EQUAL(at_cuts.size(), cuts.size());
  const auto trials = reader.trials();
  for (const auto& bytes : at_cuts) {
    store::DecisionReplay part(reader.spec(), spec, reader.path());
    for (const auto& s : reader.sessions())
      part.add_session(s.first_seq);
    part.load(bytes);
    reader.for_each_in_seq_order(
        reader.events(),
        [&](const store::EventRecord& e) {
          part.event(e, e.trial < trials.size() ? &trials[e.trial].config : nullptr);
        },
        [&](const store::MetricRecord& m) { part.metric(m); }, part.next_seq());
    BOOST_TEST((part.snapshot() == end), "cut at seq " << part.next_seq());
  }
}

// Writes `bytes` into the slots of the results file at `path` (as a writer that died, or
// another study's, left them).
void write_slots(const std::string& path, const std::vector<std::pair<int, std::string>>& slots) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  BOOST_REQUIRE(file >= 0);
  for (const auto& [slot, bytes] : slots)
    store::write_snapshot_slot(file, slot, bytes);
  H5Fclose(file);
}

// The file resumed by replaying every row, and as a resume does (from a snapshot if one
// serves).
std::pair<store::ResumeState, store::ResumeState> resume_both(const std::string& path,
                                                              const core::StudySpec& spec) {
  const store::StudyReader reader(path);
  store::ResumeOptions whole_options;
  whole_options.use_snapshots = false;
  auto whole = store::resume_study(reader, spec, whole_options);
  return {std::move(whole), store::resume_study(reader, spec, {})};
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_resume_from_the_snapshot_is_the_whole_replay) {
  const std::string metric = "metric = \"loss\"\n";
  for (const std::string& lines :
       {metric + "[scheduler]\ntype = \"fifo\"\nmax_t = 9\n", metric + kAsha,
        metric + "sampler = \"tpe\"\n" + kAsha,
        metric + "sampler = \"mobster\"\n[scheduler]\ntype = \"asha_promotion\"\ngrace_period = "
                 "1\nreduction_factor = 3\nmax_t = 27\n",
        metric + "sampler = \"bohb\"\n[scheduler]\ntype = \"hyperband\"\nmax_t = "
                 "27\nreduction_factor = 3\n",
        metric + "sampler = \"mobster\"\n[scheduler]\ntype = \"freeze_thaw\"\ngrace_period = "
                 "1\nmax_t = 9\nreduction_factor = 3\n",
        metric + "[scheduler]\ntype = \"median\"\nmax_t = 12\ngrace_period = 2\n",
        "metric = [\"loss\", \"latency\"]\nmode = [\"min\", \"min\"]\nsampler = \"nsga2\"\n" +
            kAsha}) {
    BOOST_TEST_CONTEXT(lines) {
      check_study(study(lines));
    }
  }
  // PBT: a population of 12 on 4 workers; exploits are part of the snapshot.
  BOOST_TEST_CONTEXT("pbt") {
    check_study(
        study("metric = \"loss\"\n[scheduler]\ntype = \"pbt\"\nmax_t = "
              "16\nperturbation_interval = 2\n[scheduler.mutations]\nlr = \"resample\"\n",
              12));
  }
}

BOOST_AUTO_TEST_CASE(a_torn_snapshot_is_passed_over_for_the_other) {
  const auto spec = study("metric = \"loss\"\nsampler = \"tpe\"\n" + kAsha);
  testing::TempFolder folder;
  const std::string path = folder.file("snap.h5");
  simulate_into(path, spec);
  std::vector<std::pair<int, std::string>> slots;
  {
    const store::StudyReader reader(path);
    slots = reader.decision_snapshots();
  }
  BOOST_REQUIRE_EQUAL(slots.size(), 2u);
  std::string why;
  const auto seq_of = [&why](const std::string& bytes) {
    return store::check_snapshot(bytes, why)->seq;
  };
  const int newest = seq_of(slots[0].second) > seq_of(slots[1].second) ? 0 : 1;
  const std::uint64_t older_seq = seq_of(slots[1 - newest].second);
  // A write that stopped half-way: the second half still the bytes before it.
  std::string torn = slots[newest].second;
  for (std::size_t i = torn.size() / 2; i < torn.size() - 40; ++i)
    torn[i] = static_cast<char>(torn[i] ^ 0x5a);
  write_slots(path, {{newest, torn}});
  const auto [whole, resumed] = resume_both(path, spec);
  BOOST_TEST_REQUIRE(resumed.snapshot_seq.has_value());
  BOOST_TEST(*resumed.snapshot_seq == older_seq);
  BOOST_TEST(resumed.snapshot_slot == 1 - newest);
  BOOST_TEST(resumed.snapshot_note.find("SHA-256 does not match") != std::string::npos,
             resumed.snapshot_note);
  check_same_resume(whole, resumed);
}

BOOST_AUTO_TEST_CASE(a_snapshot_of_another_study_is_refused_and_the_rows_replayed) {
  const auto spec = study("metric = \"loss\"\nsampler = \"tpe\"\n" + kAsha);
  testing::TempFolder folder;
  const std::string path = folder.file("snap.h5");
  simulate_into(path, spec);
  // Another study's snapshot (MOBSTER's state where TPE's should be) in both slots.
  const auto other = study("metric = \"loss\"\nsampler = \"mobster\"\n" + kAsha);
  const std::string foreign = store::DecisionReplay(other, other, path).snapshot();
  write_slots(path, {{0, foreign}, {1, foreign}});
  const auto [whole, resumed] = resume_both(path, spec);
  BOOST_TEST(!resumed.snapshot_seq);
  BOOST_TEST(resumed.snapshot_note.find("not this study's") != std::string::npos,
             resumed.snapshot_note);
  check_same_resume(whole, resumed);
}
