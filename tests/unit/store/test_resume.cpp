#define BOOST_TEST_MODULE store_resume
// Resuming a study whose admissions closed, with room for more trials now (issue #58):
// the trials dropped when it ended wait at their rungs again, the file says so (schema
// 8's `reopen`), and a later resume replays that.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "config/study_file.hpp"
#include "core/error.hpp"
#include "store/resume.hpp"
#include "store/study_reader.hpp"
#include "store/study_writer.hpp"
#include "unit/store/simulated_study.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;

namespace {

// The first study of issue #58: 6 trials on 4 workers, asha_promotion up to max_t = 20.
core::StudySpec first_study(std::uint64_t max_trials) {
  return config::parse_study(R"(
[study]
name = "reopen"
metric = "loss"
seed = 5
max_trials = )" + std::to_string(max_trials) +
                                 R"(
[search]
lr = { loguniform = [1e-4, 1e-1] }
width = { randint = [16, 256] }
[scheduler]
type = "asha_promotion"
grace_period = 1
max_t = 20
reduction_factor = 3
)",
                             "study.toml");
}

std::vector<core::TrialId> with_status(const store::ResumeState& state, store::TrialStatus status) {
  std::vector<core::TrialId> out;
  for (const auto& t : state.trials)
    if (t.status == status) out.push_back(t.id);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(trials_dropped_at_the_end_reopen_when_max_trials_is_raised) {
  testing::TempFolder dir;
  const std::string path = dir.file("s.h5");
  testing::simulate_into(path, first_study(6), 4);
  std::vector<core::TrialId> dropped;
  {
    const store::StudyReader reader(path);
    // The same study again: no room, nothing reopens.
    const auto same = store::resume_study(reader, first_study(6), {});
    BOOST_TEST(same.reopened.empty());
    dropped = with_status(same, store::TrialStatus::Stopped);
    BOOST_REQUIRE(!dropped.empty());
  }
  std::vector<std::pair<core::TrialId, store::TrialStatus>> live;
  std::uint64_t next_seq = 0;
  {
    const store::StudyReader reader(path);
    const auto larger = first_study(10);
    const auto state = store::resume_study(reader, larger, {true});
    BOOST_TEST(state.reopened == dropped);
    BOOST_TEST(state.dropped.empty());  // admissions are open again: nothing is final
    BOOST_TEST(with_status(state, store::TrialStatus::Stopped).empty());
    for (const core::TrialId id : dropped) {
      BOOST_TEST((state.trials[id].status == store::TrialStatus::Paused));
      BOOST_TEST(std::count(state.unfinished.begin(), state.unfinished.end(), id) == 1);
    }
    live = state.live;
    next_seq = state.next_seq;
  }
  {
    store::WriterOptions options;
    options.virtual_clock = true;
    auto writer = store::StudyWriter::reopen(path, first_study(10), options, {next_seq, live});
    for (const core::TrialId id : dropped)
      writer->trial_reopened(id, 100.0);
  }
  const store::StudyReader reader(path);
  for (const auto& t : reader.trials()) {
    if (std::count(dropped.begin(), dropped.end(), t.id) == 0) continue;
    BOOST_TEST((t.status == store::TrialStatus::Paused));
    BOOST_TEST(std::isnan(t.end_time));
    BOOST_TEST(t.error.empty());
  }
  std::size_t reopen_events = 0;
  for (const auto& e : reader.events())
    reopen_events += e.kind == store::EventKind::Reopen;
  BOOST_TEST(reopen_events == dropped.size());
  // A later resume replays the reopening: the trials are paused, none reopens twice.
  const auto again = store::resume_study(reader, first_study(10), {true});
  BOOST_TEST(again.reopened.empty());
  BOOST_TEST(with_status(again, store::TrialStatus::Paused) == dropped);
  // Back to 6 trials: no room, nothing reopens; the reopened ones stay paused until the
  // session closes admissions again and its end game decides.
  const auto smaller = store::resume_study(reader, first_study(6), {true});
  BOOST_TEST(smaller.reopened.empty());
  BOOST_TEST(with_status(smaller, store::TrialStatus::Paused) == dropped);
}

BOOST_AUTO_TEST_CASE(a_file_of_schema_7_resumes_with_room_but_cannot_reopen) {
  testing::TempFolder dir;
  const std::string path = dir.file("v7.h5");
  testing::simulate_into(path, first_study(6), 4, 7);
  store::WriterPosition position;
  {
    const store::StudyReader reader(path);
    const auto state = store::resume_study(reader, first_study(10), {true});
    BOOST_TEST(state.reopened.empty());
    BOOST_TEST(state.left_dropped > 0U);
    BOOST_TEST(state.left_dropped == with_status(state, store::TrialStatus::Stopped).size());
    position = {state.next_seq, state.live};
  }
  store::WriterOptions options;
  options.virtual_clock = true;
  auto writer = store::StudyWriter::reopen(path, first_study(10), options, position);
  BOOST_CHECK_THROW(writer->trial_reopened(0, 1.0), UsageError);
}
