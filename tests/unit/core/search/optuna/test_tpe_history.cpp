#define BOOST_TEST_MODULE core_tpe_history
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "core/random.hpp"
#include "core/search/optuna/tpe_sampler.hpp"

using namespace slurmtune::core;
using tpe::Distribution;
using tpe::TrialRecord;

namespace {

std::vector<Distribution> mixed_space() {
  return {
      {Distribution::Kind::Float, 1e-5, 1e-1, std::nullopt, true, 0},
      {Distribution::Kind::Int, 16, 512, 1.0, false, 0},
      {Distribution::Kind::Float, 0, 0.5, std::nullopt, false, 0},
      {Distribution::Kind::Categorical, 0, 0, std::nullopt, false, 4},
  };
}

// A value of `d` from a unit number, clustered as a study's observations are.
double value_of(const Distribution& d, double u) {
  if (d.kind == Distribution::Kind::Categorical)
    return std::min(std::floor(u * static_cast<double>(d.choices)),
                    static_cast<double>(d.choices - 1));
  const double x = d.log ? std::exp(std::log(d.low) + u * (std::log(d.high) - std::log(d.low)))
                         : d.low + u * (d.high - d.low);
  return d.kind == Distribution::Kind::Int ? std::round(x) : x;
}

double clustered(Xoshiro256& rng, int i) {
  return i % 3 == 0 ? 0.2 + 0.05 * rng.uniform01()
                    : (i % 3 == 1 ? 0.7 + 0.1 * rng.uniform01() : rng.uniform01());
}

// A history of every kind of record: mostly completed, some pruned (with and without
// reports, one NaN), failed and running.
std::vector<TrialRecord> random_history(const std::vector<Distribution>& space, std::size_t n,
                                        std::uint64_t seed) {
  Xoshiro256 rng(seed);
  std::vector<TrialRecord> history(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& t = history[i];
    for (const auto& d : space)
      t.params.emplace_back(value_of(d, clustered(rng, static_cast<int>(i))));
    const auto kind = rng.below(20);
    t.value = rng.uniform01();
    if (kind < 14) {
      t.state = TrialRecord::State::Complete;
    } else if (kind < 17) {
      t.state = TrialRecord::State::Pruned;
      if (kind > 14)
        t.last_intermediate = std::pair{static_cast<double>(rng.below(3)),
                                        i % 50 == 0 ? std::nan("") : rng.uniform01()};
    } else if (kind < 19) {
      t.state = TrialRecord::State::Failed;
    }
  }
  return history;
}

tpe::RankedHistory index_of(const std::vector<Distribution>& space,
                            const std::vector<TrialRecord>& history, std::size_t bins,
                            bool constant_liar) {
  tpe::RankedHistory index(space, bins, false, constant_liar);
  for (std::size_t i = 0; i < history.size(); ++i)
    index.update(i, history[i]);
  return index;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_ranking_is_optuna_s) {
  const auto space = mixed_space();
  const auto history = random_history(space, 400, 1);
  for (const bool liar : {false, true}) {
    const auto index = index_of(space, history, 64, liar);
    // The reference: every ranked record, stably sorted by rank.
    std::vector<std::pair<tpe::Rank, std::size_t>> ranked;
    std::size_t finished = 0;
    for (std::size_t i = 0; i < history.size(); ++i) {
      if (const auto r = tpe::rank_of(history[i], 1.0, liar)) ranked.emplace_back(*r, i);
      finished += history[i].state == TrialRecord::State::Complete ||
                  history[i].state == TrialRecord::State::Pruned;
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    BOOST_TEST(index.ranked() == ranked.size());
    BOOST_TEST(index.finished() == finished);
    for (const std::size_t n : {0u, 1u, 25u, 100u}) {
      std::vector<std::size_t> expected;
      for (std::size_t k = 0; k < n; ++k)
        expected.push_back(ranked[k].second);
      std::sort(expected.begin(), expected.end());
      BOOST_TEST(index.best(n) == expected, boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(slices_carry_the_documented_weights) {
  // Per slice: the summed weights min(1, 1/n + (1 - 1/n) t / (N - 26)) of its
  // observations (trial number t, N trials, n observations above) and their weighted
  // mean, computed here trial by trial.
  const auto space = mixed_space();
  const auto history = random_history(space, 3000, 2);
  const std::size_t bins = 64;
  const auto index = index_of(space, history, bins, true);
  const auto below = index.best(25);
  const auto above = index.ranked_except(below);
  const double flat = static_cast<double>(history.size() - 26);
  for (std::size_t p = 0; p < space.size(); ++p) {
    const auto& d = space[p];
    const bool categorical = d.kind == Distribution::Kind::Categorical;
    const auto [low, high] = tpe::estimator_bounds(d);
    const std::size_t n_slices = categorical ? d.choices : bins;
    std::vector<double> mass(n_slices, 0.0), moment(n_slices, 0.0);
    const double n = static_cast<double>(above.size());
    for (const auto t : above) {
      const double w = std::min(1.0, 1 / n + (1 - 1 / n) * static_cast<double>(t) / flat);
      const double v = *history[t].params[p];
      const double x = d.log ? std::log(v) : v;
      const auto b =
          categorical
              ? static_cast<std::size_t>(v)
              : std::min(bins - 1, static_cast<std::size_t>((x - low) / (high - low) * bins));
      mass[b] += w;
      moment[b] += w * x;
    }
    const auto slices = index.slices_except(p, below);
    BOOST_TEST(slices.observations == above.size());
    BOOST_TEST_INFO("parameter " << p);
    for (std::size_t b = 0; b < n_slices; ++b) {
      BOOST_TEST(slices.mass[b] == mass[b], boost::test_tools::tolerance(1e-9));
      if (mass[b] > 0 && !categorical)
        BOOST_TEST(std::fabs(slices.mean[b] - moment[b] / mass[b]) < 1e-8 * (high - low));
    }
  }
}

BOOST_AUTO_TEST_CASE(the_index_does_not_depend_on_the_order_of_events) {
  // The same records reached through different event orders (a trial running, then
  // pruned, resumed and finished; in a shuffled order of trials): the same slices, bit
  // for bit, as a resumed study's replay needs.
  const auto space = mixed_space();
  const auto history = random_history(space, 800, 3);
  const auto direct = index_of(space, history, 32, true);
  tpe::RankedHistory shuffled(space, 32, false, true);
  std::vector<std::size_t> order(history.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  Xoshiro256 rng(4);
  for (std::size_t i = order.size() - 1; i > 0; --i)
    std::swap(order[i], order[rng.below(i + 1)]);
  for (const auto i : order) {
    TrialRecord running = history[i];
    running.state = TrialRecord::State::Running;
    shuffled.update(i, running);
    TrialRecord paused = history[i];
    paused.state = TrialRecord::State::Pruned;
    paused.last_intermediate = std::pair{1.0, 0.5};
    shuffled.update(i, paused);
    shuffled.update(i, history[i]);
  }
  const auto below = direct.best(25);
  BOOST_TEST(shuffled.best(25) == below, boost::test_tools::per_element());
  for (std::size_t p = 0; p < space.size(); ++p) {
    const auto a = direct.slices_except(p, below), b = shuffled.slices_except(p, below);
    BOOST_TEST(a.mass == b.mass, boost::test_tools::per_element());
    BOOST_TEST(a.mean == b.mean, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(a_binned_density_stays_close_to_the_exact_one) {
  // 5,000 clustered observations: the binned "above" density against Optuna's over the
  // same observations, where the exact one puts its mass.
  Xoshiro256 rng(7);
  for (const auto& d : {Distribution{Distribution::Kind::Float, 1e-5, 1e-1, std::nullopt, true, 0},
                        Distribution{Distribution::Kind::Int, 16, 512, 1.0, false, 0},
                        Distribution{Distribution::Kind::Float, 0, 1, std::nullopt, false, 0}}) {
    std::vector<TrialRecord> history(5000);
    std::vector<double> observed;
    for (std::size_t i = 0; i < history.size(); ++i) {
      history[i].state = TrialRecord::State::Complete;
      history[i].value = static_cast<double>(i);  // the first 25 are "below"
      history[i].params = {value_of(d, clustered(rng, static_cast<int>(i)))};
      if (i >= 25) observed.push_back(*history[i].params[0]);
    }
    const auto index = index_of({d}, history, 128, false);
    const auto below = index.best(25);
    const tpe::EstimatorOptions options;
    const tpe::ParzenEstimator exact({observed}, {d}, options);
    const tpe::ParzenEstimator binned(d, index.slices_except(0, below), options);
    NumpyRandomState draw(3);
    const auto points = exact.sample(draw, 200);
    const auto e = exact.log_pdf(points), b = binned.log_pdf(points);
    double worst = 0;
    for (std::size_t i = 0; i < e.size(); ++i)
      worst = std::max(worst, std::fabs(e[i] - b[i]));
    BOOST_TEST_INFO("distribution kind " << static_cast<int>(d.kind) << ", log " << d.log);
    BOOST_TEST_MESSAGE("worst log-density difference " << worst);
    BOOST_TEST(worst < 0.1);  // within 10 % wherever the exact estimator puts its mass
  }
}

BOOST_AUTO_TEST_CASE(a_categorical_binned_by_choice_is_optuna_s_mixture) {
  // Summing a categorical's rows per choice changes nothing but rounding.
  const Distribution d{Distribution::Kind::Categorical, 0, 0, std::nullopt, false, 5};
  std::vector<TrialRecord> history(600);
  Xoshiro256 rng(9);
  std::vector<double> observed;
  for (std::size_t i = 0; i < history.size(); ++i) {
    history[i].state = TrialRecord::State::Complete;
    history[i].value = static_cast<double>(i);
    history[i].params = {static_cast<double>(rng.below(i % 2 ? 5 : 2))};
    if (i >= 25) observed.push_back(*history[i].params[0]);
  }
  const auto index = index_of({d}, history, 32, false);
  const tpe::EstimatorOptions options;
  const tpe::ParzenEstimator exact({observed}, {d}, options);
  // The exact estimator ramps over the observations' order, the slices over trial
  // numbers; with the first 25 trials below, these differ by 25 in the ramp's origin.
  const tpe::ParzenEstimator binned(d, index.slices_except(0, index.best(25)), options);
  const std::vector<std::vector<double>> choices{{0, 1, 2, 3, 4}};
  const auto e = exact.log_pdf(choices), b = binned.log_pdf(choices);
  for (std::size_t c = 0; c < 5; ++c)
    BOOST_TEST(e[c] == b[c], boost::test_tools::tolerance(0.02));
}

BOOST_AUTO_TEST_CASE(an_updated_sampler_suggests_what_a_fresh_one_does) {
  // A binned sampler kept up to date event by event against one that reads the same
  // history at once: the same suggestions, so a resumed study goes on as it would have.
  const auto space = mixed_space();
  tpe::TpeOptions options;
  options.bins = 32;
  options.constant_liar = true;
  tpe::TpeSampler live(space, options, 11, false);
  std::vector<TrialRecord> history;
  Xoshiro256 rng(12);
  std::vector<std::size_t> running;
  for (std::size_t t = 0; t < 400; ++t) {
    history.emplace_back();
    if (t % 50 == 49) {
      tpe::TpeSampler fresh(space, options, 11, false);
      fresh.restore(live.model_words(), live.startup_words());
      auto copy = history;
      const auto expected = fresh.suggest(copy);
      const auto got = live.suggest(history);
      BOOST_TEST(got == expected, boost::test_tools::per_element());
    } else {
      live.suggest(history);
    }
    live.changed(history, t);
    running.push_back(t);
    // Four workers: finish one of the running trials at random.
    if (running.size() < 4) continue;
    const auto k = rng.below(running.size());
    const auto id = running[k];
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    auto& r = history[id];
    r.last_intermediate = std::pair{1.0, rng.uniform01()};
    const auto end = rng.below(10);
    r.state = end < 7   ? TrialRecord::State::Complete
              : end < 9 ? TrialRecord::State::Pruned
                        : TrialRecord::State::Failed;
    r.value = r.last_intermediate->second;
    live.changed(history, id);
  }
}
