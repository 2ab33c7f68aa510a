// `[sampler] prior_model` (src/core/search/gp/mobster_prior.cpp, prior_task_rows): the
// earlier studies' observations in MOBSTER's Gaussian process as another task. The fit
// learns how far they carry over (the task input's length scale), the model's picks follow
// a lesson that holds before this study has seen much, the earlier rows are bounded, and
// the state written and read back suggests what the uninterrupted suggester does.
#define BOOST_TEST_MODULE core_prior_model
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <sstream>
#include <vector>

#include "core/search/gp/gaussian_process.hpp"
#include "core/search/gp/mobster_suggester.hpp"
#include "core/state_archive_io.hpp"
#include "unit/core/search/gp/earlier_on_line.hpp"
#include "unit/core/search/suggester_testing.hpp"

using namespace slurmtune::core;
using namespace slurmtune::testing;

namespace {

// The earlier study of these tests: its best at `centre`, each of its values 1 higher than
// this study's (another size of the task), judged at rung 1 only.
std::vector<PastTrial> earlier(double centre, std::size_t n = 40) {
  return earlier_on_line(centre, n, 1.0, false);
}

// A prior that only the model uses: no start-up from its region, none as they were, no
// candidates from it, so that what differs is the earlier rows in the model.
MobsterOptions model_only(bool prior_model) {
  MobsterOptions o;
  o.n_startup_trials = 6;
  o.prior_share = 0;
  o.prior_exact = 0;
  o.prior_model = prior_model;
  return o;
}

// Sequential trials judged at rung 1 by |x - optimum|; each trial's x.
std::vector<double> run(MobsterSuggester& s, double optimum, std::size_t trials) {
  std::vector<double> xs;
  for (TrialId t = 0; t < trials; ++t) {
    const double x = x_of(s.suggest(t).config);
    xs.push_back(x);
    s.reported(t, 1, std::fabs(x - optimum), at_rung(1, SchedulerDecision::Stop));
    s.ended(t, TrialEnd::Stopped);
  }
  return xs;
}

// The correlation the fitted kernel gives one configuration's value in the two tasks.
double task_correlation(const gp::Posterior& model) {
  const auto& h = model.hyperparameters();
  const std::vector<double> here{0.5, 0.0, 1.0}, there{0.5, 0.0, 0.0};
  return gp::matern52(here, there, h) / gp::matern52(here, here, h);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_earlier_rows_follow_this_study_s_in_the_model) {
  MobsterSuggester s(kLine, model_only(true), false, 3, earlier(0.3));
  run(s, 0.3, 10);
  const auto model = s.model();
  BOOST_REQUIRE(model);
  const auto& data = model->data();
  BOOST_TEST(data.dims == 3u);  // x, the resource, the task
  BOOST_TEST(data.size() == 10u + 40u);
  for (std::size_t i = 0; i < data.size(); ++i)
    BOOST_TEST(data.row(i)[2] == (i < 10 ? 1.0 : 0.0));
  // The earlier targets are standardised apart: their +1 does not show.
  double mean = 0;
  for (std::size_t i = 10; i < data.size(); ++i)
    mean += data.targets[i] / 40;
  BOOST_TEST(std::fabs(mean) < 1e-9);
  // Without prior_model the model is this study's alone.
  MobsterSuggester plain(kLine, model_only(false), false, 3, earlier(0.3));
  run(plain, 0.3, 10);
  BOOST_TEST(plain.model()->data().dims == 2u);
  BOOST_TEST(plain.model()->data().size() == 10u);
}

BOOST_AUTO_TEST_CASE(the_fit_learns_how_far_the_lesson_carries) {
  MobsterSuggester holds(kLine, model_only(true), false, 3, earlier(0.3));
  run(holds, 0.3, 16);
  MobsterSuggester wrong(kLine, model_only(true), false, 3, earlier(0.1));
  run(wrong, 0.85, 16);
  const double held = task_correlation(*holds.model());
  const double broke = task_correlation(*wrong.model());
  BOOST_TEST_MESSAGE("fitted correlation of the tasks: " << held << " where the lesson holds, "
                                                         << broke << " where it is wrong");
  BOOST_TEST(held > 0.8);
  BOOST_TEST(broke < 0.5);
}

BOOST_AUTO_TEST_CASE(the_model_s_first_picks_follow_a_lesson_that_holds) {
  // Uniform start-ups either way; the model's first picks after them lie nearer the optimum
  // with the earlier rows, and no farther from it where the lesson is wrong.
  const auto first_picks = [](bool prior_model, double centre, double optimum) {
    double distance = 0;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      MobsterSuggester s(kLine, model_only(prior_model), false, seed, earlier(centre));
      const auto xs = run(s, optimum, 10);
      for (std::size_t t = 6; t < 10; ++t)
        distance += std::fabs(xs[t] - optimum) / 24;
    }
    return distance;
  };
  const double with_rows = first_picks(true, 0.3, 0.3), without = first_picks(false, 0.3, 0.3);
  BOOST_TEST_MESSAGE("first model picks' distance to the optimum: "
                     << with_rows << " with the earlier rows, " << without << " without");
  BOOST_TEST(with_rows < without);
  const double wrong = first_picks(true, 0.1, 0.85), wrong_without = first_picks(false, 0.1, 0.85);
  BOOST_TEST_MESSAGE("where the lesson is wrong: " << wrong << " with them, " << wrong_without
                                                   << " without");
  BOOST_TEST(wrong < 1.5 * wrong_without);
}

BOOST_AUTO_TEST_CASE(the_earlier_rows_are_bounded) {
  auto options = model_only(true);
  options.max_fit_observations = 16;
  MobsterSuggester s(kLine, options, false, 3, earlier(0.3, 500));
  run(s, 0.3, 8);
  BOOST_TEST(s.model()->data().size() == 8u + 16u);
}

BOOST_AUTO_TEST_CASE(written_and_read_back_it_suggests_the_same) {
  MobsterSuggester whole(kLine, model_only(true), false, 4, earlier(0.3));
  const auto xs = run(whole, 0.3, 20);
  MobsterSuggester first(kLine, model_only(true), false, 4, earlier(0.3));
  run(first, 0.3, 12);
  std::ostringstream out;
  {
    StateOut archive(out);
    first.save_state(archive);
  }
  MobsterSuggester resumed(kLine, model_only(true), false, 4, earlier(0.3));
  std::istringstream in(out.str());
  StateIn archive(in);
  resumed.load_state(archive);
  for (TrialId t = 12; t < 20; ++t) {
    const double x = x_of(resumed.suggest(t).config);
    BOOST_TEST(x == xs[t]);
    resumed.reported(t, 1, std::fabs(x - 0.3), at_rung(1, SchedulerDecision::Stop));
    resumed.ended(t, TrialEnd::Stopped);
  }
}
