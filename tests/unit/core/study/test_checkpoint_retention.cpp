#define BOOST_TEST_MODULE core_checkpoint_retention
// [checkpoints] (issue #63, item 4): which checkpoints go, and that a checkpoint a trial
// may still resume from never does.
#include <boost/test/unit_test.hpp>

#include "core/study/checkpoint_retention.hpp"

using namespace slurmtune::core;
using Reason = CheckpointRemoval::Reason;

namespace {

CheckpointPolicy policy(std::optional<std::int64_t> per_trial, std::optional<std::int64_t> ended) {
  CheckpointPolicy p;
  p.keep_per_trial = per_trial;
  p.keep_ended = ended;
  return p;
}

std::vector<std::string> paths(const std::vector<CheckpointRemoval>& removals) {
  std::vector<std::string> out;
  for (const auto& r : removals)
    out.push_back(r.path);
  return out;
}

using Paths = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_CASE(the_default_removes_nothing) {
  CheckpointRetention r(CheckpointPolicy{}, Mode::Min);
  for (int step = 1; step <= 5; ++step)
    BOOST_TEST(r.saved(0, step, "s.trials/trial-0/ckpt-" + std::to_string(step)).empty());
  BOOST_TEST(r.ended(0, 1.0).empty());
  BOOST_TEST(r.ended(1, std::nullopt).empty());
}

BOOST_AUTO_TEST_CASE(keep_per_trial_removes_the_oldest_past_the_newest_n) {
  CheckpointRetention r(policy(2, std::nullopt), Mode::Min);
  BOOST_TEST(r.saved(0, 1, "t/trial-0/a").empty());
  BOOST_TEST(r.saved(0, 2, "t/trial-0/b").empty());
  const auto removed = r.saved(0, 3, "t/trial-0/c");
  BOOST_TEST(paths(removed) == Paths{"t/trial-0/a"}, boost::test_tools::per_element());
  BOOST_TEST(removed[0].trial == 0U);
  BOOST_TEST(removed[0].step == 1.0);
  BOOST_TEST((removed[0].reason == Reason::Superseded));
  // The same path saved again is the newest, not a new one: nothing goes.
  BOOST_TEST(r.saved(0, 4, "t/trial-0/b").empty());
  BOOST_TEST(r.kept(0) == (Paths{"t/trial-0/c", "t/trial-0/b"}), boost::test_tools::per_element());
  // Another trial's checkpoints are its own.
  BOOST_TEST(r.saved(1, 1, "t/trial-1/a").empty());
  BOOST_TEST(paths(r.saved(0, 5, "t/trial-0/d")) == Paths{"t/trial-0/c"},
             boost::test_tools::per_element());
  // Without keep_ended, a trial that ends keeps what it has.
  BOOST_TEST(r.ended(0, 0.5).empty());
}

BOOST_AUTO_TEST_CASE(a_folder_that_holds_a_kept_checkpoint_stays) {
  // A trial that named a folder once and a file inside it later: removing the folder
  // would remove the newest checkpoint with it.
  CheckpointRetention r(policy(1, std::nullopt), Mode::Min);
  BOOST_TEST(r.saved(0, 1, "t/trial-0/ckpt").empty());
  BOOST_TEST(r.saved(0, 2, "t/trial-0/ckpt/model.pt").empty());
  BOOST_TEST(r.saved(0, 3, "t/trial-0/ckpt-other").size() == 1U);  // model.pt: not within
}

BOOST_AUTO_TEST_CASE(keep_ended_keeps_the_best_k_ended_trials_and_removes_the_rest) {
  CheckpointRetention r(policy(std::nullopt, 2), Mode::Min);
  for (TrialId t = 0; t < 5; ++t) {
    r.saved(t, 1, "t/trial-" + std::to_string(t) + "/a");
    r.saved(t, 3, "t/trial-" + std::to_string(t) + "/b");
  }
  BOOST_TEST(r.ended(0, 0.5).empty());
  BOOST_TEST(r.ended(1, 0.7).empty());
  // Worse than both: its own checkpoints go as it ends.
  const auto own = r.ended(2, 0.9);
  BOOST_TEST(paths(own) == (Paths{"t/trial-2/a", "t/trial-2/b"}), boost::test_tools::per_element());
  BOOST_TEST((own[0].reason == Reason::Ended));
  // Better than trial 1: trial 1's go (outranked), trial 3's stay.
  const auto pushed = r.ended(3, 0.6);
  BOOST_TEST(paths(pushed) == (Paths{"t/trial-1/a", "t/trial-1/b"}),
             boost::test_tools::per_element());
  BOOST_TEST(pushed[0].trial == 1U);
  BOOST_TEST((pushed[0].reason == Reason::Outranked));
  BOOST_TEST(r.kept(3).size() == 2U);
  // A failed trial (no best value) is never among the best.
  const auto failed = r.ended(4, std::nullopt);
  BOOST_TEST(paths(failed) == (Paths{"t/trial-4/a", "t/trial-4/b"}),
             boost::test_tools::per_element());
  BOOST_TEST(r.kept(0).size() == 2U);
  BOOST_TEST(r.kept(1).empty());
}

BOOST_AUTO_TEST_CASE(keep_ended_follows_the_mode_and_breaks_ties_by_id) {
  CheckpointRetention r(policy(std::nullopt, 1), Mode::Max);
  r.saved(0, 1, "t/trial-0/a");
  r.saved(1, 1, "t/trial-1/a");
  r.saved(2, 1, "t/trial-2/a");
  BOOST_TEST(r.ended(0, 0.8).empty());
  BOOST_TEST(paths(r.ended(1, 0.9)) == Paths{"t/trial-0/a"}, boost::test_tools::per_element());
  // A tie: the trial that ended first (the lower id) keeps its place.
  BOOST_TEST(paths(r.ended(2, 0.9)) == Paths{"t/trial-2/a"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(keep_ended_zero_removes_every_ended_trial_s_checkpoints) {
  CheckpointRetention r(policy(1, 0), Mode::Min);
  r.saved(0, 1, "t/trial-0/a");
  BOOST_TEST(paths(r.ended(0, 0.1)) == Paths{"t/trial-0/a"}, boost::test_tools::per_element());
  BOOST_TEST(r.kept(0).empty());
  BOOST_TEST(r.ended(7, 0.1).empty());  // a trial that saved nothing
}
