#define BOOST_TEST_MODULE core_moasha_scheduler
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "core/schedulers/early_stopping/moasha_scheduler.hpp"

using namespace slurmtune::core;
using Ids = std::vector<std::size_t>;

namespace {

SchedulerSpec two_objectives(Mode second = Mode::Min) {
  SchedulerSpec s;
  s.type = SchedulerType::Asha;
  s.grace_period = 1;
  s.reduction_factor = 3;
  s.max_t = 9;
  s.objectives = {{"loss", Mode::Min}, {"cost", second}};
  s.metric_columns = {"loss", "mem", "cost"};
  return s;
}

ReportOutcome report(MoashaScheduler& s, TrialId trial, double step, double loss, double cost) {
  s.reported_metrics(trial, step, {loss, std::nan(""), cost});
  return s.report(trial, step, loss);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_order_is_fronts_each_as_an_epsilon_net) {
  // Front: (0,10) (5,5) (10,0) (6,4); then (7,7), then (9,9).
  const std::vector<std::vector<double>> points = {{5, 5}, {9, 9},  {0, 10},
                                                   {7, 7}, {10, 0}, {6, 4}};
  // First the best in the first objective (0,10); farthest from it (10,0); then the
  // point whose nearest chosen one is farthest: (5,5) (0.707 of the range) before (6,4).
  BOOST_TEST(moasha_order(points) == (Ids{2, 4, 0, 5, 3, 1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(objectives_in_other_units_weigh_alike) {
  // Scaled by their ranges, (0, 1000) and (1, 0) are equally far from (0.5, 500); raw
  // distances would let the second objective decide alone.
  const std::vector<std::vector<double>> points = {{0, 1000}, {1, 0}, {0.5, 500}, {0.9, 100}};
  const auto order = moasha_order(points);
  BOOST_TEST(order[0] == 0u);
  BOOST_TEST(order[1] == 1u);
  BOOST_TEST(order[2] == 2u);  // nearest chosen at 0.707 of the ranges; (0.9,100) at 0.141
}

BOOST_AUTO_TEST_CASE(the_first_third_of_a_rung_continues) {
  MoashaScheduler s(two_objectives());
  for (TrialId t = 0; t < 4; ++t)
    s.add_trial(t, std::nullopt);
  const auto first = report(s, 0, 1, 5, 5);
  BOOST_TEST(*first.rung == 0);
  BOOST_TEST((first.decision == SchedulerDecision::Continue));
  BOOST_TEST(first.standing->judged == 1u);
  // (6,6) is dominated by (5,5): position 1 of 2, and ceil(2/3) = 1 continues.
  const auto dominated = report(s, 1, 1, 6, 6);
  BOOST_TEST((dominated.decision == SchedulerDecision::Stop));
  BOOST_TEST(dominated.standing->position == 1u);
  BOOST_TEST(dominated.standing->kept == 1u);
  // (0,10) is on the front and best in the first objective: first of 3.
  const auto extreme = report(s, 2, 1, 0, 10);
  BOOST_TEST((extreme.decision == SchedulerDecision::Continue));
  BOOST_TEST(extreme.standing->position == 0u);
  // Four recorded: two continue; (10,0) is the point farthest from (0,10).
  const auto other_end = report(s, 3, 1, 10, 0);
  BOOST_TEST(other_end.standing->position == 1u);
  BOOST_TEST(other_end.standing->kept == 2u);
  BOOST_TEST((other_end.decision == SchedulerDecision::Continue));
  // Between rungs: not judged.
  BOOST_TEST(!report(s, 0, 2, 4, 4).rung);
  BOOST_TEST(*report(s, 0, 3, 4, 4).rung == 1);
}

BOOST_AUTO_TEST_CASE(a_maximised_objective_is_negated_and_a_missing_one_waits) {
  MoashaScheduler s(two_objectives(Mode::Max));
  s.add_trial(0, std::nullopt);
  s.add_trial(1, std::nullopt);
  report(s, 0, 1, 5, 5);
  // Higher cost is better here: (5, 9) dominates (5, 5).
  const auto better = report(s, 1, 1, 5, 9);
  BOOST_TEST(better.standing->position == 0u);
  BOOST_TEST((better.decision == SchedulerDecision::Continue));
  // A trial that has not reported every objective is not judged until it has.
  s.add_trial(2, std::nullopt);
  s.reported_metrics(2, 1, {4.0, std::nan(""), std::nan("")});
  BOOST_TEST(!s.report(2, 1, 4.0).rung);
  s.reported_metrics(2, 2, {std::nan(""), 1.0, 7.0});
  const auto judged = s.report(2, 2, std::nan(""));
  BOOST_TEST(*judged.rung == 0);  // at rung 1 with its last values (4, 7)
  BOOST_TEST(judged.standing->judged == 3u);
}
