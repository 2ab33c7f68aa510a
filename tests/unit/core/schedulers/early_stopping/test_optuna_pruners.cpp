#define BOOST_TEST_MODULE core_optuna_pruners
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "core/schedulers/early_stopping/optuna_pruners.hpp"
#include "unit/core/schedulers/scheduler_fixture.hpp"

using namespace slurmtune::core;
using namespace slurmtune::core::testing;

namespace {
SchedulerSpec halving(std::optional<std::int64_t> min_resource, std::int64_t bootstrap = 0,
                      std::int64_t rate = 0) {
  auto s = spec(SchedulerType::Asha, 1, 3, 100);
  s.semantics = Semantics::Optuna;
  s.min_resource = min_resource;
  s.bootstrap_count = bootstrap;
  s.min_early_stopping_rate = rate;
  return s;
}
}  // namespace

BOOST_AUTO_TEST_CASE(crc32_matches_zlib) {
  BOOST_TEST(crc32("123456789") == 0xCBF43926U);
  BOOST_TEST(crc32("mlp_3") == 7488647U);  // Python: binascii.crc32(b"mlp_3")
  BOOST_TEST(crc32("") == 0U);
}

BOOST_AUTO_TEST_CASE(own_value_competes_and_ties_are_kept) {
  OptunaSuccessiveHalvingScheduler s(halving(1), Mode::Min);
  // Rung 0 holds {1}: 1 // 3 - 1 = -1 -> index 0: the best; 1 <= 1 is promoted.
  auto o = start_and_report(s, 0, 1, 1.0);
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
  BOOST_TEST(*o.cutoff == 1.0);
  // {1, 2}: index 0 -> 1; 2 is not <= 1: pruned.
  BOOST_TEST(start_and_report(s, 1, 1, 2.0).decision == SchedulerDecision::Stop);
  // {1, 2, 0.5}: index 0 -> 0.5; promoted.
  BOOST_TEST(start_and_report(s, 2, 1, 0.5).decision == SchedulerDecision::Continue);
  // {1, 2, 0.5, 0.5}: a tie with the cutoff is kept.
  BOOST_TEST(start_and_report(s, 3, 1, 0.5).decision == SchedulerDecision::Continue);
  // Six values: index 6 // 3 - 1 = 1 -> the second best (0.5).
  start_and_report(s, 4, 1, 3.0);
  o = start_and_report(s, 5, 1, 0.7);
  BOOST_TEST(*o.cutoff == 0.5);
  BOOST_TEST(o.decision == SchedulerDecision::Stop);
}

BOOST_AUTO_TEST_CASE(max_mode_keeps_the_largest_values) {
  OptunaSuccessiveHalvingScheduler s(halving(1), Mode::Max);
  start_and_report(s, 0, 1, 1.0);
  BOOST_TEST(start_and_report(s, 1, 1, 2.0).decision == SchedulerDecision::Continue);
  BOOST_TEST(start_and_report(s, 2, 1, 1.5).decision == SchedulerDecision::Stop);
}

BOOST_AUTO_TEST_CASE(one_report_can_pass_several_rungs) {
  OptunaSuccessiveHalvingScheduler s(halving(1), Mode::Min);
  // Rung budgets 1, 3, 9, 27: a first report at step 10 passes rungs 0, 1 and 2.
  auto o = start_and_report(s, 0, 10, 1.0);
  BOOST_TEST(o.decision == SchedulerDecision::Continue);
  BOOST_TEST(*o.rung == 2);
  // A second trial at step 10 that is worse is pruned at the first rung it fails.
  o = start_and_report(s, 1, 10, 2.0);
  BOOST_TEST(o.decision == SchedulerDecision::Stop);
  BOOST_TEST(*o.rung == 0);
}

BOOST_AUTO_TEST_CASE(an_enormous_step_climbs_the_representable_rungs_and_stops) {
  // Found by fuzz_replay: rung budgets past 2^63 saturated, so a step of 3e30 (or
  // infinity) "passed" the same rung for ever and grew the rungs until memory ran out.
  for (const double step : {2.9e30, std::numeric_limits<double>::infinity()}) {
    OptunaSuccessiveHalvingScheduler s(halving(2), Mode::Min);
    const auto o = start_and_report(s, 0, step, 1.0);
    BOOST_TEST(o.decision == SchedulerDecision::Continue);
    BOOST_TEST(*o.rung <= 63);  // 2 * 3^k stays below 2^63 up to k = 38
  }
}

BOOST_AUTO_TEST_CASE(nan_at_a_rung_is_pruned_before_it_is_recorded) {
  OptunaSuccessiveHalvingScheduler s(halving(1), Mode::Min);
  BOOST_TEST(start_and_report(s, 0, 1, std::nan("")).decision == SchedulerDecision::Stop);
  // Nothing was recorded: the next trial is alone in the rung.
  BOOST_TEST(start_and_report(s, 1, 1, 100.0).decision == SchedulerDecision::Continue);
  // Below the first budget NaN is not judged at all.
  OptunaSuccessiveHalvingScheduler later(halving(2), Mode::Min);
  BOOST_TEST(start_and_report(later, 0, 1, std::nan("")).decision == SchedulerDecision::Continue);
}

BOOST_AUTO_TEST_CASE(bootstrap_count_prunes_until_enough_values_compete) {
  OptunaSuccessiveHalvingScheduler s(halving(1, 2), Mode::Min);
  BOOST_TEST(start_and_report(s, 0, 1, 1.0).decision == SchedulerDecision::Stop);
  BOOST_TEST(start_and_report(s, 1, 1, 1.0).decision == SchedulerDecision::Stop);
  BOOST_TEST(start_and_report(s, 2, 1, 0.1).decision == SchedulerDecision::Continue);
}

BOOST_AUTO_TEST_CASE(min_early_stopping_rate_shifts_the_first_budget) {
  OptunaSuccessiveHalvingScheduler s(halving(1, 0, 1), Mode::Min);
  BOOST_TEST(!start_and_report(s, 0, 2, 1.0).rung);
  BOOST_TEST(*s.report(0, 3, 1.0).milestone == 3.0);
}

BOOST_AUTO_TEST_CASE(auto_min_resource_waits_for_a_completed_trial) {
  OptunaSuccessiveHalvingScheduler s(halving(std::nullopt), Mode::Min);
  BOOST_TEST(!start_and_report(s, 0, 5, 1.0).rung);
  s.end_trial(0, TrialEnd::Completed, Observation{450, 1.0});
  // min_resource = max(450 // 100, 1) = 4: budgets 4, 12, 36, ...
  s.add_trial(1, std::nullopt);
  BOOST_TEST(!s.report(1, 3, 2.0).rung);
  BOOST_TEST(*s.report(1, 4, 2.0).milestone == 4.0);
}

BOOST_AUTO_TEST_CASE(hyperband_assigns_brackets_by_crc32_of_study_and_trial) {
  auto sp = spec(SchedulerType::Hyperband, 1, 3, 81);
  sp.semantics = Semantics::Optuna;
  sp.min_resource = 1;
  sp.max_resource = 81;
  OptunaHyperbandScheduler s(sp, Mode::Min, "mlp");
  BOOST_TEST(s.bracket_count() >= 4U);
  // Budgets for n brackets: ceil(n * 3^s / (s + 1)), s = n-1 .. 0; the bracket is the first
  // whose cumulative budget exceeds crc32("mlp_<trial>") mod the total.
  const auto n = static_cast<std::int64_t>(s.bracket_count());
  std::vector<std::uint64_t> cumulative;
  std::uint64_t total = 0;
  for (std::int64_t b = 0; b < n; ++b) {
    const std::int64_t e = n - 1 - b;
    total +=
        static_cast<std::uint64_t>(std::ceil(double(n) * std::pow(3.0, double(e)) / double(e + 1)));
    cumulative.push_back(total);
  }
  for (TrialId t = 0; t < 50; ++t) {
    const auto h = crc32("mlp_" + std::to_string(t)) % total;
    int expected = 0;
    while (h >= cumulative[static_cast<std::size_t>(expected)])
      ++expected;
    BOOST_REQUIRE_EQUAL(s.bracket_of(t), expected);
  }
}

BOOST_AUTO_TEST_CASE(hyperband_brackets_judge_separately_from_their_own_budget) {
  auto sp = spec(SchedulerType::Hyperband, 1, 3, 81);
  sp.semantics = Semantics::Optuna;
  sp.min_resource = 1;
  sp.max_resource = 81;
  OptunaHyperbandScheduler s(sp, Mode::Min, "study");
  // Force two trials into bracket 1 (first budget 1 * 3^1 = 3).
  s.add_trial(0, 1);
  s.add_trial(1, 1);
  BOOST_TEST(!s.report(0, 2, 1.0).rung);
  BOOST_TEST(*s.report(0, 3, 1.0).milestone == 3.0);
  BOOST_TEST(s.report(1, 3, 5.0).decision == SchedulerDecision::Stop);
  // A trial in bracket 0 does not compete with bracket 1's values.
  s.add_trial(2, 0);
  BOOST_TEST(s.report(2, 1, 50.0).decision == SchedulerDecision::Continue);
}

BOOST_AUTO_TEST_CASE(hyperband_auto_max_resource_starts_after_a_completion) {
  auto sp = spec(SchedulerType::Hyperband, 1, 3, 81);
  sp.semantics = Semantics::Optuna;
  sp.min_resource = 1;
  OptunaHyperbandScheduler s(sp, Mode::Min, "study");
  BOOST_TEST(s.bracket_count() == 0U);
  BOOST_TEST(!start_and_report(s, 0, 5, 1.0).rung);
  s.end_trial(0, TrialEnd::Completed, Observation{26, 1.0});
  s.add_trial(1, std::nullopt);
  s.report(1, 1, 1.0);
  // max_resource = 27 -> floor(log3(27)) + 1 = 4 brackets.
  BOOST_TEST(s.bracket_count() == 4U);
}
