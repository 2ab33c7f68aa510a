#define BOOST_TEST_MODULE core_step_cost_model
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <sstream>

#include "core/search/gp/step_cost_model.hpp"
#include "core/state_archive_io.hpp"

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

namespace {

// A model written and read back (the decision snapshot's path).
StepCostModel round_trip(const StepCostModel& m) {
  std::ostringstream out;
  {
    StateOut archive(out);
    m.save(archive);
  }
  auto copy = model();
  std::istringstream in(out.str());
  StateIn archive(in);
  copy.load(archive);
  return copy;
}

}  // namespace

// One measurement per report: a long study keeps only those a fit still to come sees, and
// its predictions are those of a model asked once at the end, or written and read back.
BOOST_AUTO_TEST_CASE(a_long_study_keeps_a_bounded_window_of_measurements) {
  auto often = model(), once = model(), reread = model();
  const std::vector<double> probe{0.3, 0.8};
  std::size_t most_kept = 0;
  for (TrialId t = 0; t < 3000; ++t) {
    const double width = static_cast<double>(t % 13) / 12.0;
    const double start = 10.0 * static_cast<double>(t);
    for (StepCostModel* m : {&often, &once, &reread}) {
      m->configured(t, {width});
      m->began_at(t, 0, start);
      for (int step = 1; step <= 3; ++step)
        m->reported_at(t, step, start + step * (1.0 + width) + 0.1 * (t % 5));
    }
    if (t % 97 == 5) often.predicted(probe);
    if (t == 1234) reread = round_trip(reread);
    most_kept = std::max(most_kept, often.measurements_kept());
  }
  BOOST_TEST(often.measurements() == 9000U);
  BOOST_TEST(most_kept <= 128U);
  const auto expected = *once.predicted(probe);
  BOOST_TEST((*often.predicted(probe))[0] == expected[0]);
  BOOST_TEST((*often.predicted(probe))[1] == expected[1]);
  BOOST_TEST((*reread.predicted(probe))[0] == expected[0]);
  BOOST_TEST((*reread.predicted(probe))[1] == expected[1]);
  BOOST_TEST(expected[0] < expected[1]);  // wider costs more
}
