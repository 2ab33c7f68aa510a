#define BOOST_TEST_MODULE core_suggestions_ahead
#include <boost/test/unit_test.hpp>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "core/search/suggestions_ahead.hpp"
#include "core/study/suggester_factory.hpp"
#include "unit/core/search/suggester_testing.hpp"

using namespace slurmtune;
using namespace slurmtune::core;
using namespace slurmtune::testing;

namespace {

SamplerSpec ahead(SamplerSpec spec) {
  spec.suggest_ahead = true;
  return spec;
}

std::vector<SamplerSpec> model_specs() {
  return {tpe_spec(4), bohb_spec(), mobster_spec(4)};
}

// Trial t-1 reports and ends after trial t starts (two run at once), at virtual times.
void report_previous(Suggester& s, const SearchSpace& space, const std::vector<Suggestion>& made,
                     TrialId t) {
  if (t == 0) return;
  s.reported_at(t - 1, 1, static_cast<double>(t) + 0.5);
  s.reported(t - 1, 1, loss_of(space, made[t - 1].config), at_rung(1));
  s.ended(t - 1, TrialEnd::Completed);
}

// Trials [from, to) of that script through `s`, appended to `made`.
void drive(Suggester& s, const SearchSpace& space, TrialId from, TrialId to,
           std::vector<Suggestion>& made) {
  for (TrialId t = from; t < to; ++t) {
    BOOST_REQUIRE(s.ready(t));  // inline: always
    made.push_back(s.suggest(t));
    s.began_at(t, 0, static_cast<double>(t));
    report_previous(s, space, made, t);
  }
}

bool same(const Suggestion& a, const Suggestion& b) {
  return a.config == b.config && a.info.position == b.info.position &&
         a.info.origin == b.info.origin;
}

}  // namespace

// The rule: trial k + 1's suggestion sees what the sampler saw once trial k had started,
// and nothing after, as a plain sampler asked at exactly that point.
BOOST_AUTO_TEST_CASE(each_suggestion_is_made_right_after_the_previous_start) {
  const auto space = every_kind();
  for (const auto& spec : model_specs()) {
    const auto wrapped = make_suggester(space, ahead(spec), false, 5);
    BOOST_REQUIRE(dynamic_cast<SuggestionsAhead*>(wrapped.get()));
    std::vector<Suggestion> by_rule;
    drive(*wrapped, space, 0, 30, by_rule);

    const auto plain = make_suggester(space, spec, false, 5);
    std::vector<Suggestion> by_hand;
    std::optional<Suggestion> next = plain->suggest(0);
    for (TrialId t = 0; t < 30; ++t) {
      by_hand.push_back(*next);
      plain->began_at(t, 0, static_cast<double>(t));
      next = plain->suggest(t + 1);  // right after the start, before anything else
      report_previous(*plain, space, by_hand, t);
    }
    // The same sampler asked when each trial starts suggests otherwise: the rule matters.
    const auto when_asked = make_suggester(space, spec, false, 5);
    std::vector<Suggestion> asked;
    drive(*when_asked, space, 0, 30, asked);
    std::size_t differ = 0;
    for (TrialId t = 0; t < 30; ++t) {
      BOOST_TEST_INFO("trial " << t);
      BOOST_TEST(same(by_rule[t], by_hand[t]));
      differ += !same(by_rule[t], asked[t]);
    }
    // bohb's model needs more trials than these: most of its draws are random.
    if (spec.kind != SamplerKind::Bohb) BOOST_TEST(differ > 10u);
  }
}

// A resume replays the recorded events; at the last recorded start it makes the next
// suggestion where the interrupted run made it (with the streams that trial's suggestion
// left), not after the events that followed, and then suggests on as an uninterrupted
// run does.
BOOST_AUTO_TEST_CASE(a_resume_makes_the_next_suggestion_where_the_run_made_it) {
  const auto space = every_kind();
  constexpr TrialId kInterrupted = 12, kTotal = 24;
  for (const auto& spec : model_specs()) {
    const auto original = make_suggester(space, ahead(spec), false, 11);
    std::vector<Suggestion> made;
    drive(*original, space, 0, kInterrupted, made);

    const auto replayed = [&](bool at_its_point) {
      auto rebuilt = make_suggester(space, ahead(spec), false, 11);
      for (TrialId t = 0; t < kInterrupted; ++t) {
        rebuilt->started(t, made[t].config);
        rebuilt->began_at(t, 0, static_cast<double>(t));
        if (at_its_point && t + 1 == kInterrupted)
          rebuilt->replayed_last_start(t, made[t].info.position);
        report_previous(*rebuilt, space, made, t);
      }
      rebuilt->session_began();
      rebuilt->restore(made.back().info.position);
      return rebuilt;
    };
    const auto resumed = replayed(true);
    original->session_began();
    std::vector<Suggestion> straight = made, again = made;
    drive(*original, space, kInterrupted, kTotal, straight);
    drive(*resumed, space, kInterrupted, kTotal, again);
    for (TrialId t = kInterrupted; t < kTotal; ++t) {
      BOOST_TEST_INFO("trial " << t);
      BOOST_TEST(same(straight[t], again[t]));
    }
    // Made after the whole replay instead, trial 12's would have seen trial 10's report,
    // and the suggestions would part from the uninterrupted run's.
    std::vector<Suggestion> late = made;
    drive(*replayed(false), space, kInterrupted, kTotal, late);
    bool parted = false;
    for (TrialId t = kInterrupted; t < kTotal; ++t)
      parted = parted || !same(late[t], straight[t]);
    // tpe's do: bohb draws most of these at random, and mobster's one suggestion made
    // otherwise (trial 12's: trial 10 observed instead of fantasised) picks the same
    // candidate here, after which the two have seen the same.
    if (spec.kind == SamplerKind::Tpe) BOOST_TEST(parted);
  }
}

BOOST_AUTO_TEST_CASE(trials_are_suggested_in_id_order) {
  const auto space = every_kind();
  const auto s = make_suggester(space, ahead(tpe_spec(2)), false, 1);
  s->suggest(0);
  s->began_at(0, 0, 0);  // trial 1's suggestion is made here
  BOOST_CHECK_THROW(s->suggest(2), UsageError);
}

// Blind samplers cost nothing to ask: suggest_ahead leaves them as they are.
BOOST_AUTO_TEST_CASE(blind_samplers_are_not_wrapped) {
  SamplerSpec random;
  random.suggest_ahead = true;
  const auto s = make_suggester(every_kind(), random, false, 1);
  BOOST_TEST(!dynamic_cast<SuggestionsAhead*>(s.get()));
}
