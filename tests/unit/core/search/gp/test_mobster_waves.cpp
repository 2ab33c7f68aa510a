#define BOOST_TEST_MODULE core_mobster_waves
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <set>
#include <vector>

#include "core/random.hpp"
#include "core/study/suggester_factory.hpp"
#include "unit/core/search/suggester_testing.hpp"

// MOBSTER's launch waves (MobsterOptions::wave, src/core/search/gp/mobster_model.cpp):
// with more trials awaiting their first result than max_pending, a block of `wave`
// trial ids shares one scoring of candidates. What must hold: the block's picks differ
// and follow the model; a suggester rebuilt from the events (a resume, which sees the
// starts, not the suggestions) picks what the uninterrupted one did, also mid-block;
// with few trials pending nothing changes.
using namespace slurmtune::core;
using namespace slurmtune::testing;

namespace {

const SearchSpace kSpace({{"x", ranged(DomainKind::Uniform, 0, 1)},
                          {"y", ranged(DomainKind::Uniform, 0, 1)}});

double bowl(const Configuration& c) {
  const double x = as_number(c.values[0]), y = as_number(c.values[1]);
  return (x - 0.7) * (x - 0.7) + (y - 0.2) * (y - 0.2);
}

SamplerSpec wave_spec(std::size_t wave) {
  auto spec = mobster_spec(4);
  spec.mobster.max_pending = 4;
  spec.mobster.wave = wave;
  return spec;
}

// What comes before the wave: 12 trials judged at rung 1, then `pending` trials started
// (configurations of their own, as a resume's starts are) and not yet judged.
void judged_then_pending(Suggester& s, std::size_t pending) {
  for (TrialId t = 0; t < 12; ++t) {
    const auto sug = s.suggest(t);
    s.reported(t, 1, bowl(sug.config), at_rung(1, SchedulerDecision::Stop));
    s.ended(t, TrialEnd::Stopped);
  }
  Xoshiro256 rng(11);
  for (TrialId t = 12; t < 12 + pending; ++t)
    s.started(t, Configuration{{ParamValue{rng.uniform01()}, ParamValue{rng.uniform01()}}});
}

// Trials 32 to 63 suggested (blocks of 8 from 32); before trial 43 (mid-block) three
// pending trials are judged: 15 observations, the refit ladder's next point after 12, so
// the model the block's later trials ask moves on within the block.
constexpr TrialId kFirst = 32, kEnd = 64, kJudgedBefore = 43;

void judge_three(Suggester& s) {
  for (TrialId t = 12; t < 15; ++t) {
    s.reported(t, 1, 0.5, at_rung(1, SchedulerDecision::Stop));
    s.ended(t, TrialEnd::Stopped);
  }
}

std::vector<Configuration> wave_of(std::size_t wave) {
  const auto s = make_suggester(kSpace, wave_spec(wave), false, 9);
  judged_then_pending(*s, kFirst - 12);
  std::vector<Configuration> out;
  for (TrialId t = kFirst; t < kEnd; ++t) {
    if (t == kJudgedBefore) judge_three(*s);
    const auto sug = s->suggest(t);
    BOOST_TEST((sug.info.origin == SuggestionOrigin::Model ||
                sug.info.origin == SuggestionOrigin::Random));
    out.push_back(sug.config);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(mobster_wave_picks_differ_within_a_block_and_follow_the_model) {
  const auto picks = wave_of(8);
  for (TrialId block = kFirst; block < kEnd; block += 8) {
    std::set<std::pair<double, double>> distinct;
    for (TrialId t = block; t < block + 8; ++t)
      distinct.emplace(as_number(picks[t - kFirst].values[0]),
                       as_number(picks[t - kFirst].values[1]));
    BOOST_TEST(distinct.size() == 8u);
  }
  // Uniform draws lie 0.16 from the optimum on average (in squared distance); the
  // model's picks, the best of each scoring that the block left, much nearer.
  double mean = 0;
  for (const auto& c : picks)
    mean += bowl(c) / static_cast<double>(picks.size());
  BOOST_TEST(mean < 0.06);
  // Not the per-trial scoring: a wave is what made the picks.
  const auto own = wave_of(0);
  std::size_t same = 0;
  for (std::size_t k = 0; k < picks.size(); ++k)
    same += picks[k] == own[k];
  BOOST_TEST(same < picks.size());
}

BOOST_AUTO_TEST_CASE(mobster_wave_pick_is_a_function_of_the_events) {
  const auto picks = wave_of(8);
  // A resume at each point of the run, mid-block included: the rebuilt suggester sees
  // the same events (the suggested trials as starts) and suggests the next trial alone.
  for (const TrialId resume_at : {TrialId{33}, TrialId{43}, TrialId{46}, TrialId{56}}) {
    const auto s = make_suggester(kSpace, wave_spec(8), false, 9);
    judged_then_pending(*s, kFirst - 12);
    for (TrialId t = kFirst; t < resume_at; ++t) {
      if (t == kJudgedBefore) judge_three(*s);
      s->started(t, picks[t - kFirst]);
    }
    if (resume_at == kJudgedBefore) judge_three(*s);
    BOOST_TEST((s->suggest(resume_at).config == picks[resume_at - kFirst]),
               "resumed before trial " << resume_at);
  }
}

BOOST_AUTO_TEST_CASE(mobster_wave_changes_nothing_with_few_trials_pending) {
  // 3 pending, max_pending 4: every trial scores its own candidates, wave or none.
  const auto run = [](std::size_t wave) {
    const auto s = make_suggester(kSpace, wave_spec(wave), false, 5);
    judged_then_pending(*s, 3);
    std::vector<Configuration> out;
    for (TrialId t = 15; t < 40; ++t) {
      const auto sug = s->suggest(t);
      out.push_back(sug.config);
      s->reported(t, 1, bowl(sug.config), at_rung(1, SchedulerDecision::Stop));
      s->ended(t, TrialEnd::Stopped);
    }
    return out;
  };
  BOOST_TEST((run(8) == run(0)));
}
