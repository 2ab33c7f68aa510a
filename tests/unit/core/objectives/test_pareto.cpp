#define BOOST_TEST_MODULE core_pareto
#include <boost/test/unit_test.hpp>
#include <limits>

#include "core/objectives/objectives.hpp"
#include "core/objectives/pareto.hpp"

using namespace slurmtune::core;
using Ids = std::vector<std::size_t>;

namespace {
// (1,4) (2,2) (4,1) are the front; (3,3) and (2,5) the second; (5,5) the third.
const std::vector<std::vector<double>> kPoints = {{1, 4}, {2, 2}, {4, 1}, {3, 3}, {5, 5}, {2, 5}};

Dominance plain() {
  return [](std::size_t a, std::size_t b) { return dominates(kPoints[a], kPoints[b]); };
}
}  // namespace

BOOST_AUTO_TEST_CASE(dominance_needs_no_worse_everywhere_and_a_difference) {
  BOOST_TEST(dominates(std::vector<double>{1, 2}, std::vector<double>{2, 2}));
  BOOST_TEST(!dominates(std::vector<double>{1, 3}, std::vector<double>{2, 2}));
  BOOST_TEST(!dominates(std::vector<double>{2, 2}, std::vector<double>{2, 2}));  // equal
}

BOOST_AUTO_TEST_CASE(fronts_come_in_optunas_order) {
  // _fast_non_dominated_sort swaps a member taken out with the last one: the second
  // front comes out as (2,5) before (3,3).
  const auto fronts = nondominated_fronts({0, 1, 2, 3, 4, 5}, plain());
  BOOST_TEST(fronts.size() == 3u);
  BOOST_TEST(fronts[0] == (Ids{0, 1, 2}), boost::test_tools::per_element());
  BOOST_TEST(fronts[1] == (Ids{5, 3}), boost::test_tools::per_element());
  BOOST_TEST(fronts[2] == (Ids{4}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(crowding_distance_puts_the_extremes_first) {
  // Per objective the two ends get an infinite gap; (2,2) gets (4-1)/3 twice. Sorted by
  // distance (stable, from the last objective's order 2,1,0), then reversed.
  Ids front{0, 1, 2};
  crowding_distance_sort(front, kPoints);
  BOOST_TEST(front == (Ids{0, 2, 1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(constrained_dominance_puts_feasible_first_then_less_violation) {
  const ParetoPoint good{{5, 5}, std::vector<double>{-1.0}};
  const ParetoPoint better_but_infeasible{{1, 1}, std::vector<double>{0.5}};
  const ParetoPoint worse_violation{{0, 0}, std::vector<double>{2.0, 0.5}};
  const ParetoPoint unknown{{0, 0}, std::nullopt};
  BOOST_TEST(constrained_dominates(good, better_but_infeasible));
  BOOST_TEST(!constrained_dominates(better_but_infeasible, good));
  BOOST_TEST(constrained_dominates(better_but_infeasible, ParetoPoint{{9, 9}, {{1.0}}}));
  BOOST_TEST(!constrained_dominates(worse_violation, better_but_infeasible));  // 2.5 vs 0.5
  BOOST_TEST(!constrained_dominates(ParetoPoint{{9, 9}, {{0.5}}}, better_but_infeasible));  // tie
  BOOST_TEST(constrained_dominates(good, unknown));  // no constraint values: dominated
  BOOST_TEST(!constrained_dominates(unknown, worse_violation));
  BOOST_TEST(total_violation({2.0, -3.0, 0.5}) == 2.5);
}

BOOST_AUTO_TEST_CASE(the_front_leaves_infeasible_trials_out) {
  std::vector<ParetoPoint> points;
  for (const auto& p : kPoints)
    points.push_back({p, std::vector<double>{0.0}});
  points[1].constraints = std::vector<double>{0.1};  // (2,2) breaks its constraint
  BOOST_TEST(pareto_front(points, false) == (Ids{0, 1, 2}), boost::test_tools::per_element());
  // Without (2,2), (3,3) is no longer dominated; (2,5) still is, by (1,4).
  BOOST_TEST(pareto_front(points, true) == (Ids{0, 2, 3}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(constraints_read_and_evaluate_as_optuna_expects) {
  std::string why;
  const auto at_most = parse_constraint("mem_gb<=40", why);
  BOOST_TEST((at_most && at_most->metric == "mem_gb" && at_most->limit == 40.0));
  BOOST_TEST(at_most->value(41.5) == 1.5);
  const auto at_least = parse_constraint("  accuracy >= 0.9 ", why);
  BOOST_TEST(at_least->value(0.95) == 0.9 - 0.95);
  // The operator is the last one: a metric name may hold '<', '>' and '='.
  const auto odd = parse_constraint("a<=b >= 2", why);
  BOOST_TEST((odd && odd->metric == "a<=b" && odd->bound == Constraint::Bound::AtLeast));
  BOOST_TEST(!parse_constraint("mem = 4", why));
  BOOST_TEST(!parse_constraint("<= 4", why));
  BOOST_TEST(why == "names no metric before '<='");
  BOOST_TEST(!parse_constraint("mem <= inf", why));
}

BOOST_AUTO_TEST_CASE(a_trials_values_are_the_last_reported_of_each) {
  ObjectiveTracker t(2, 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  t.update({1.0, nan}, {nan});
  BOOST_TEST(!t.complete());
  BOOST_TEST(!t.constraint_values({Constraint{"mem", Constraint::Bound::AtMost, 4}}));
  t.update({nan, 7.0}, {5.0});
  t.update({0.5, nan}, {nan});
  BOOST_TEST(t.complete());
  BOOST_TEST(t.objectives() == (std::vector<double>{0.5, 7.0}), boost::test_tools::per_element());
  BOOST_TEST((*t.constraint_values({Constraint{"mem", Constraint::Bound::AtMost, 4}}))[0] == 1.0);
}
