#define BOOST_TEST_MODULE core_step_cost_model
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "core/search/gp/step_cost_model.hpp"

using namespace slurmtune::core;

namespace {
StepCostModel model() {
  return StepCostModel(1, 200, 1.25, 30);
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_trial_costs_what_its_timed_stretches_took_per_unit_of_resource) {
  auto m = model();
  m.configured(0, {0.5});
  BOOST_TEST(!m.measured(0));
  m.began_at(0, 0, 100.0);     // launched at t = 100
  m.reported_at(0, 1, 103.0);  // 3 s for the first step, launch included
  BOOST_TEST(*m.measured(0) == 3.0);
  m.reported_at(0, 3, 105.0);  // then 1 s a step
  BOOST_TEST(*m.measured(0) == 5.0 / 3.0);
  // Paused, resumed from step 3 an hour later: the pause is not a cost.
  m.began_at(0, 3, 3705.0);
  m.reported_at(0, 9, 3711.0);
  BOOST_TEST(*m.measured(0) == 11.0 / 9.0);
}

BOOST_AUTO_TEST_CASE(what_spans_a_session_s_end_is_not_timed) {
  auto m = model();
  m.configured(0, {0.5});
  m.began_at(0, 0, 0.0);
  m.reported_at(0, 1, 2.0);
  m.session_began();            // the trial restarts in a new session, no recorded beginning
  m.reported_at(0, 2, 5000.0);  // not a step of 4998 s
  BOOST_TEST(*m.measured(0) == 2.0);
  m.reported_at(0, 3, 5002.0);  // timed again only from a report of this session
  BOOST_TEST(*m.measured(0) == 2.0);
  m.began_at(0, 3, 6000.0);
  m.reported_at(0, 4, 6001.0);
  BOOST_TEST(*m.measured(0) == 1.5);
}

// The cost of a configuration that never ran comes from those that did: here cost rises
// with the one input (a width), and the model says so for an unseen width.
BOOST_AUTO_TEST_CASE(an_unmeasured_configuration_costs_what_similar_ones_did) {
  auto m = model();
  std::vector<double> probe{0.1, 0.9};
  BOOST_TEST(!m.predicted(probe));  // nothing measured yet
  for (TrialId t = 0; t < 12; ++t) {
    const double width = static_cast<double>(t) / 11.0;
    m.configured(t, {width});
    m.began_at(t, 0, 0.0);
    m.reported_at(t, 1, std::exp(4.0 * width));  // 1 s to 55 s a step
  }
  const auto seconds = m.predicted(probe);
  BOOST_REQUIRE(seconds);
  BOOST_TEST((*seconds)[0] < 3.0);
  BOOST_TEST((*seconds)[1] > 20.0);
}

// Replay asks less often than the run: the model must not depend on when it was asked.
BOOST_AUTO_TEST_CASE(predictions_do_not_depend_on_when_they_were_asked_for) {
  auto often = model(), once = model();
  const std::vector<double> probe{0.3};
  for (TrialId t = 0; t < 30; ++t) {
    const double width = static_cast<double>(t % 7) / 6.0;
    for (StepCostModel* m : {&often, &once}) {
      m->configured(t, {width});
      m->began_at(t, 0, 10.0 * static_cast<double>(t));
      m->reported_at(t, 1, 10.0 * static_cast<double>(t) + 1.0 + width);
      m->reported_at(t, 3,
                     10.0 * static_cast<double>(t) + 2.0 + 3.0 * width);  // a cost that changes
    }
    often.predicted(probe);
  }
  BOOST_TEST((*often.predicted(probe))[0] == (*once.predicted(probe))[0]);
}
