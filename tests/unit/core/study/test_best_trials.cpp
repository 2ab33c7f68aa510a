#define BOOST_TEST_MODULE core_best_trials
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <map>
#include <random>

#include "core/study/best_trials.hpp"

using namespace slurmtune::core;

namespace {

// What BestTrials promises, the plain way: each trial's first best value (a tie keeps the
// earlier report), failed trials left out, the lowest (highest) value, ties to the lower id.
class Reference {
 public:
  explicit Reference(Mode mode) : mode_(mode) {}
  void note(TrialId trial, double step, double value) {
    if (std::isnan(value)) return;
    const auto it = best_.find(trial);
    if (it == best_.end() || better(value, it->second.value))
      best_[trial] = BestSoFar{trial, step, value};
  }
  void forget(TrialId trial) { best_.erase(trial); }
  std::optional<BestSoFar> best() const {
    std::optional<BestSoFar> out;
    for (const auto& [trial, b] : best_)  // in id order: a tie keeps the lower id
      if (!out || better(b.value, out->value)) out = b;
    return out;
  }

 private:
  bool better(double a, double b) const { return mode_ == Mode::Min ? a < b : a > b; }
  Mode mode_;
  std::map<TrialId, BestSoFar> best_;
};

void check_same(const std::optional<BestSoFar>& got, const std::optional<BestSoFar>& want) {
  BOOST_REQUIRE_EQUAL(got.has_value(), want.has_value());
  if (!got) return;
  BOOST_TEST(got->trial == want->trial);
  BOOST_TEST(got->step == want->step);
  BOOST_TEST(got->value == want->value);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_best_of_the_trials_that_did_not_fail) {
  BestTrials best(Mode::Min);
  BOOST_TEST(!best.best());
  best.note(3, 1, 0.5);
  best.note(1, 1, 0.7);
  best.note(2, 1, NAN);  // never best
  BOOST_TEST(best.best()->trial == 3u);
  best.note(1, 2, 0.5);  // a tie goes to the lower id
  BOOST_TEST(best.best()->trial == 1u);
  BOOST_TEST(best.best()->step == 2.0);
  best.note(1, 3, 0.5);  // a tie with its own best keeps the earlier report
  BOOST_TEST(best.best()->step == 2.0);
  best.forget(1);  // it crashed: the next best takes its place
  BOOST_TEST(best.best()->trial == 3u);
  best.note(1, 4, 0.1);  // a forgotten trial that reports again counts again
  BOOST_TEST(best.best()->trial == 1u);
  best.forget(1);
  best.forget(3);
  BOOST_TEST(!best.best());
}

BOOST_AUTO_TEST_CASE(agrees_with_a_scan_of_every_trial_through_random_reports_and_failures) {
  for (const Mode mode : {Mode::Min, Mode::Max}) {
    std::mt19937_64 random(mode == Mode::Min ? 7 : 11);
    BestTrials best(mode);
    Reference reference(mode);
    std::uniform_int_distribution<TrialId> trial(0, 199);
    std::uniform_int_distribution<int> what(0, 99), level(0, 40);
    for (int i = 0; i < 40000; ++i) {
      const TrialId t = trial(random);
      const int w = what(random);
      if (w < 2) {
        best.forget(t);
        reference.forget(t);
      } else {
        // Few distinct values, so that ties across trials and within one are common.
        const double value = w < 4 ? NAN : level(random) / 8.0;
        best.note(t, i, value);
        reference.note(t, i, value);
      }
      check_same(best.best(), reference.best());
    }
  }
}
