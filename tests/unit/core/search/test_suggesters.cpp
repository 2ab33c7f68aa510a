#define BOOST_TEST_MODULE core_suggesters
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <map>
#include <string>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/search/bohb/bohb_sampler.hpp"
#include "core/search/model_suggesters.hpp"
#include "core/simulation/simulation.hpp"
#include "core/study/suggester_factory.hpp"
#include "unit/core/search/suggester_testing.hpp"

using namespace slurmtune::core;
using namespace slurmtune::testing;

BOOST_AUTO_TEST_CASE(model_suggestions_stay_inside_every_kind_of_domain) {
  const auto space = every_kind();
  for (const auto& spec : {tpe_spec(), bohb_spec(), mobster_spec()}) {
    const auto s = make_suggester(space, spec, false, 3);
    const auto suggestions = run_trials(*s, space, 0, 60);
    std::size_t model = 0;
    for (const auto& sug : suggestions) {
      model += sug.info.origin == SuggestionOrigin::Model;
      for (std::size_t p = 0; p < space.size(); ++p) {
        const auto& param = space.parameters()[p];
        BOOST_TEST_CONTEXT(param.name << " = " << to_text(sug.config.values[p])) {
          BOOST_TEST(param.domain.admits(sug.config.values[p]));
          if (param.domain.kind == DomainKind::QUniform ||
              param.domain.kind == DomainKind::QLogUniform) {
            const double x = as_number(sug.config.values[p]) / param.domain.q;
            BOOST_TEST(x == std::round(x));
          }
          if (param.domain.kind == DomainKind::QRandInt)
            BOOST_TEST(std::get<std::int64_t>(sug.config.values[p]) % 4 == 0);
        }
      }
    }
    BOOST_TEST(model > 20u);
  }
}

BOOST_AUTO_TEST_CASE(tpe_starts_at_random_then_follows_its_model) {
  const auto space = every_kind();
  const auto s = make_suggester(space, tpe_spec(5), false, 1);
  const auto suggestions = run_trials(*s, space, 0, 40);
  for (std::size_t i = 0; i < suggestions.size(); ++i)
    BOOST_TEST((suggestions[i].info.origin ==
                (i < 5 ? SuggestionOrigin::Startup : SuggestionOrigin::Model)));
  // On one parameter the model concentrates on the optimum (u = 0.3): its later
  // suggestions are closer than uniform draws on [-1, 1] (mean distance 0.545).
  const SearchSpace line({{"u", ranged(DomainKind::Uniform, -1, 1)}});
  const auto one = make_suggester(line, tpe_spec(5), false, 1);
  const auto later = run_trials(*one, line, 0, 40);
  double distance = 0;
  for (std::size_t i = 20; i < 40; ++i)
    distance += std::fabs(as_number(later[i].config.values[0]) - 0.3);
  BOOST_TEST(distance / 20 < 0.2);
}

BOOST_AUTO_TEST_CASE(a_rebuilt_suggester_restored_to_the_last_position_suggests_the_same) {
  const auto space = every_kind();
  for (const auto& spec : {tpe_spec(4), bohb_spec(), mobster_spec(4)}) {
    const auto original = make_suggester(space, spec, false, 9);
    const auto before = run_trials(*original, space, 0, 25);
    const auto next = run_trials(*original, space, 25, 5);
    // As resume does: the recorded events, then the last suggestion's stream positions.
    const auto rebuilt = make_suggester(space, spec, false, 9);
    for (TrialId t = 0; t < before.size(); ++t) {
      rebuilt->started(t, before[t].config);
      rebuilt->reported(t, 1, loss_of(space, before[t].config), {});
      rebuilt->ended(t, TrialEnd::Completed);
    }
    rebuilt->restore(before.back().info.position);
    const auto again = run_trials(*rebuilt, space, 25, 5);
    for (std::size_t i = 0; i < next.size(); ++i) {
      BOOST_TEST_INFO(space.to_json(again[i].config) << " vs " << space.to_json(next[i].config));
      BOOST_TEST((again[i].config == next[i].config));
      BOOST_TEST((again[i].info.position == next[i].info.position));
    }
  }
}

BOOST_AUTO_TEST_CASE(bohb_fits_on_the_highest_budget_with_enough_observations) {
  bohb::BohbSampler sampler({{0}, {0}}, BohbOptions{}, 0);  // 2 dimensions: 3 points minimum
  BOOST_TEST(!sampler.model_budget().has_value());
  for (int i = 0; i < 5; ++i)
    sampler.observe(9, {0.1 * i, 0.5}, i);
  // 5 points at budget 9: a good set of 3 leaves 2 bad ones, not more than 2 dimensions.
  BOOST_TEST(!sampler.model_budget().has_value());
  for (int i = 0; i < 20; ++i)
    sampler.observe(1, {0.05 * i, 0.2}, i);
  BOOST_TEST(sampler.model_budget().value_or(-1) == 1.0);
  for (int i = 0; i < 6; ++i)
    sampler.observe(9, {0.1 * i, 0.6}, 10 + i);
  BOOST_TEST(sampler.model_budget().value_or(-1) == 9.0);  // the highest budget that can be fitted
}

BOOST_AUTO_TEST_CASE(bohb_learns_from_trials_stopped_at_a_rung) {
  const SearchSpace space({{"x", ranged(DomainKind::Uniform, 0, 1)}});
  const auto s = make_suggester(space, bohb_spec(0.0), false, 4);
  // One dimension: a model needs 2 good and 2 bad points, 4 observations.
  for (TrialId t = 0; t < 8; ++t) {
    const auto sug = s->suggest(t);
    BOOST_TEST((sug.info.origin == (t < 4 ? SuggestionOrigin::Random : SuggestionOrigin::Model)));
    const double x = as_number(sug.config.values[0]);
    s->reported(t, 1, std::fabs(x - 0.8), at_rung(1, SchedulerDecision::Stop));
    s->ended(t, TrialEnd::Stopped);
  }
  // Only stopped trials, observed at rung 1: the model lives there.
  double distance = 0;
  for (TrialId t = 8; t < 28; ++t) {
    const auto sug = s->suggest(t);
    BOOST_TEST((sug.info.origin == SuggestionOrigin::Model));
    distance += std::fabs(as_number(sug.config.values[0]) - 0.8);
    s->reported(t, 1, std::fabs(as_number(sug.config.values[0]) - 0.8),
                at_rung(1, SchedulerDecision::Stop));
    s->ended(t, TrialEnd::Stopped);
  }
  BOOST_TEST(distance / 20 < 0.2);  // uniform draws: 0.34 on average
}

BOOST_AUTO_TEST_CASE(model_samplers_refuse_grid_axes_and_wide_seeds) {
  const SearchSpace grid({{"g", listed(DomainKind::Grid, {ParamValue{1.0}, ParamValue{2.0}})}});
  BOOST_CHECK_THROW(make_suggester(grid, tpe_spec(), false, 0), slurmtune::InputError);
  BOOST_CHECK_THROW(make_suggester(grid, bohb_spec(), false, 0), slurmtune::InputError);
  BOOST_CHECK_THROW(make_suggester(grid, mobster_spec(), false, 0), slurmtune::InputError);
  const SearchSpace plain({{"x", ranged(DomainKind::Uniform, 0, 1)}});
  BOOST_CHECK_THROW(make_suggester(plain, tpe_spec(), false, std::uint64_t{1} << 32),
                    slurmtune::InputError);
}

BOOST_AUTO_TEST_CASE(simulations_with_model_samplers_are_deterministic) {
  for (const auto kind : {SamplerKind::Tpe, SamplerKind::Bohb, SamplerKind::Mobster}) {
    StudySpec s;
    s.name = "sim";
    s.metric = "loss";
    s.seed = 5;
    s.max_trials = 120;
    s.sampler.kind = kind;
    s.space = every_kind();
    s.scheduler.type = SchedulerType::Hyperband;
    s.scheduler.max_t = 27;
    s.scheduler.grace_period = 1;
    s.scheduler.reduction_factor = 3;
    SimulationOptions options;
    options.workers = 4;
    const auto a = simulate_study(s, options, nullptr);
    const auto b = simulate_study(s, options, nullptr);
    BOOST_TEST(a.final.started == 120u);
    BOOST_TEST(a.final.reports == b.final.reports);
    BOOST_TEST((a.best_config == b.best_config));
    BOOST_TEST(*a.final.best_value == *b.final.best_value);
  }
}

BOOST_AUTO_TEST_CASE(a_binned_tpe_is_optuna_s_until_the_history_outgrows_its_bins) {
  const auto space = every_kind();
  auto exact = tpe_spec(5), binned = tpe_spec(5);
  binned.tpe.bins = 40;
  const auto a = make_suggester(space, exact, false, 2);
  const auto b = make_suggester(space, binned, false, 2);
  // Up to 40 observations above the split nothing is binned: the same suggestions.
  const auto first_a = run_trials(*a, space, 0, 40);
  const auto first_b = run_trials(*b, space, 0, 40);
  for (std::size_t i = 0; i < first_a.size(); ++i)
    BOOST_TEST((first_a[i].config == first_b[i].config));
}

// semantics = "auto": Optuna's suggestions while fewer than binned_from trials have
// finished; from then on exactly what the binned sampler suggests from the same history
// with its random streams at the same place (a resumed binned sampler, restored).
BOOST_AUTO_TEST_CASE(auto_tpe_is_optuna_s_then_binned_from_binned_from) {
  const auto space = every_kind();
  auto exact = tpe_spec(5), automatic = tpe_spec(5), binned = tpe_spec(5);
  automatic.tpe.bins = binned.tpe.bins = 32;
  automatic.tpe.binned_from = 60;
  const auto a = make_suggester(space, exact, false, 2);
  const auto b = make_suggester(space, automatic, false, 2);
  const auto before_a = run_trials(*a, space, 0, 60);
  const auto before_b = run_trials(*b, space, 0, 60);
  for (std::size_t i = 0; i < before_a.size(); ++i)
    BOOST_TEST((before_a[i].config == before_b[i].config));
  const auto c = make_suggester(space, binned, false, 2);
  for (TrialId t = 0; t < before_b.size(); ++t) {
    c->started(t, before_b[t].config);
    c->reported(t, 1, loss_of(space, before_b[t].config), {});
    c->ended(t, TrialEnd::Completed);
  }
  c->restore(before_b.back().info.position);
  const auto after_a = run_trials(*a, space, 60, 40);
  const auto after_b = run_trials(*b, space, 60, 40);
  const auto after_c = run_trials(*c, space, 60, 40);
  std::size_t unlike_optuna = 0;
  for (std::size_t i = 0; i < after_b.size(); ++i) {
    BOOST_TEST((after_b[i].config == after_c[i].config));
    unlike_optuna += after_b[i].config == after_a[i].config ? 0 : 1;
  }
  BOOST_TEST(unlike_optuna > 0u);
}

// [[enqueue]]: trial i runs entry i's values; a whole entry is origin "enqueued", a
// partial one keeps the sampler's origin and its other values; later trials are the
// sampler's own, for blind samplers exactly what they suggest without the queue.
BOOST_AUTO_TEST_CASE(enqueued_configurations_come_first) {
  const SearchSpace space = every_kind();
  for (const auto kind :
       {SamplerKind::Random, SamplerKind::Tpe, SamplerKind::Bohb, SamplerKind::Mobster}) {
    BOOST_TEST_CONTEXT(sampler_keyword(kind)) {
      SamplerSpec spec;
      spec.kind = kind;
      const auto plain = make_suggester(space, spec, false, 5)->suggest(0).config;
      PartialConfiguration whole{
          std::vector<std::optional<ParamValue>>(plain.values.begin(), plain.values.end())};
      whole.values[0] = ParamValue{0.25};
      PartialConfiguration partial{std::vector<std::optional<ParamValue>>(space.size())};
      partial.values[7] = ParamValue{"rms"};
      spec.enqueued = {whole, partial};
      const auto suggester = make_suggester(space, spec, false, 5);
      const Suggestion first = suggester->suggest(0);
      BOOST_TEST(to_string(first.info.origin) == "enqueued");
      BOOST_TEST(as_number(first.config.values[0]) == 0.25);
      suggester->started(0, first.config);
      const Suggestion second = suggester->suggest(1);
      BOOST_TEST(to_string(second.info.origin) != "enqueued");
      BOOST_TEST(std::get<std::string>(second.config.values[7]) == "rms");
      for (std::size_t p = 0; p < space.size(); ++p)
        BOOST_TEST(space.parameters()[p].domain.admits(second.config.values[p]));
      suggester->started(1, second.config);
      if (kind == SamplerKind::Random)
        BOOST_TEST((suggester->suggest(2).config ==
                    make_suggester(space, SamplerSpec{}, false, 5)->suggest(2).config));
    }
  }
}

// An enqueued trial's configuration is what the sampler learns from, though the study
// (the coordinator, the simulation) does not tell it again after the suggestion: MOBSTER
// records its own suggestion as started, and before this fix it kept its own draw for an
// enqueued trial, while replay and resume told it what ran, so their model picks differed.
BOOST_AUTO_TEST_CASE(a_model_learns_the_enqueued_configuration_as_replay_does) {
  const SearchSpace space = every_kind();
  SamplerSpec spec = mobster_spec(2);
  const auto plain = make_suggester(space, spec, false, 3)->suggest(0).config;
  PartialConfiguration whole{
      std::vector<std::optional<ParamValue>>(plain.values.begin(), plain.values.end())};
  whole.values[0] = ParamValue{0.9};
  spec.enqueued = {whole};
  const auto live = make_suggester(space, spec, false, 3);
  const auto replayed = make_suggester(space, spec, false, 3);
  for (TrialId t = 0; t < 12; ++t) {
    const Suggestion ran = live->suggest(t);  // the study starts it as suggested
    const Suggestion again = replayed->suggest(t);
    replayed->started(t, ran.config);  // replay: the start event's configuration
    BOOST_TEST_INFO("trial " << t << ": " << space.to_json(again.config) << " vs "
                             << space.to_json(ran.config));
    BOOST_TEST((again.config == ran.config));
    for (Suggester* s : {live.get(), replayed.get()}) {
      s->reported(t, 1, loss_of(space, ran.config), {});
      s->ended(t, TrialEnd::Completed);
    }
  }
}

// Optuna's group decomposition depends on the order trials finished in, as seen at each
// trial's start. A resumed study rebuilds it from the recorded starts and ends (in their
// order), so it suggests what the uninterrupted run did, out-of-order endings included.
BOOST_AUTO_TEST_CASE(tpe_groups_resume_in_the_order_trials_finished) {
  const SearchSpace space({
      {"opt", listed(DomainKind::Choice, {ParamValue{"a"}, ParamValue{"b"}})},
      {"x", ranged(DomainKind::Uniform, 0, 1), {Condition{0, {ParamValue{"a"}}}}},
      {"y", ranged(DomainKind::Uniform, 0, 1), {Condition{0, {ParamValue{"b"}}}}},
      {"z", ranged(DomainKind::Uniform, 0, 1)},
  });
  SamplerSpec spec = tpe_spec(3);
  spec.tpe.estimator.multivariate = true;
  spec.tpe.group = true;
  // Trial 0 takes x, trial 1 takes y; trial 1 ends first, and trial 2 starts while trial 0
  // still runs: the groups come as {y}, then {x}, not in id order.
  const auto opt = [&](const char* v) {
    PartialConfiguration p{std::vector<std::optional<ParamValue>>(space.size())};
    p.values[0] = ParamValue{v};
    return p;
  };
  spec.enqueued = {opt("a"), opt("b")};
  // Two trials in flight: every third time the newer one ends and the older keeps running
  // while the next starts, so that trials finish out of their id order.
  struct Op {
    enum Kind { Suggest, End } kind;
    TrialId trial;
  };
  std::vector<Op> script;
  std::vector<TrialId> running;
  for (TrialId t = 0; t < 30; ++t) {
    script.push_back({Op::Suggest, t});
    running.push_back(t);
    if (running.size() < 2) continue;
    const std::size_t which = t % 3 == 1 ? 1 : 0;
    script.push_back({Op::End, running[which]});
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(which));
  }
  for (const auto t : running)
    script.push_back({Op::End, t});
  const auto loss = [&](const Configuration& c) {
    return as_number(c.values[3]) + (c.is_active(1) ? as_number(c.values[1]) : 0.5);
  };
  std::vector<Suggestion> original(30);
  const auto run = make_suggester(space, spec, false, 4);
  for (const auto& op : script) {
    if (op.kind == Op::Suggest) {
      original[op.trial] = run->suggest(op.trial);
      run->started(op.trial, original[op.trial].config);
    } else {
      run->reported(op.trial, 1, loss(original[op.trial].config), {});
      run->ended(op.trial, TrialEnd::Completed);
    }
  }
  BOOST_TEST(std::count_if(original.begin(), original.end(), [](const Suggestion& s) {
               return s.info.origin == SuggestionOrigin::Model;
             }) > 20);
  const std::size_t cut = 36;  // ops replayed from the record, then suggested anew
  const auto rebuilt = make_suggester(space, spec, false, 4);
  std::optional<SamplerPosition> last;
  for (std::size_t i = 0; i < script.size(); ++i) {
    const auto& op = script[i];
    if (op.kind == Op::End) {
      rebuilt->reported(op.trial, 1, loss(original[op.trial].config), {});
      rebuilt->ended(op.trial, TrialEnd::Completed);
    } else if (i < cut) {
      rebuilt->started(op.trial, original[op.trial].config);
      last = original[op.trial].info.position;
    } else {
      if (last) rebuilt->restore(*last);
      last.reset();
      const auto again = rebuilt->suggest(op.trial);
      BOOST_TEST_INFO("trial " << op.trial);
      BOOST_TEST((again.config == original[op.trial].config));
      rebuilt->started(op.trial, again.config);
    }
  }
}

// bohb and mobster on a conditional space. bohb: an absent parameter is NaN in its
// observations, imputed as HpBandSter imputes (from a row that has it, else at random)
// when a density is fitted; a drawn vector keeps only what exists. mobster: an absent
// input is a constant no present value takes. Either way the model takes over, and a
// rebuilt suggester restored to the recorded position suggests the same.
BOOST_AUTO_TEST_CASE(model_samplers_take_conditional_spaces) {
  const SearchSpace space({
      {"opt", listed(DomainKind::Choice, {ParamValue{"a"}, ParamValue{"b"}})},
      {"x", ranged(DomainKind::Uniform, 0, 1), {Condition{0, {ParamValue{"a"}}}}},
      {"k",
       listed(DomainKind::Choice, {ParamValue{1L}, ParamValue{2L}, ParamValue{3L}}),
       {Condition{0, {ParamValue{"b"}}}}},
      {"z", ranged(DomainKind::Uniform, 0, 1)},
  });
  const auto loss = [&](const Configuration& c) {
    return std::fabs(as_number(c.values[3]) - 0.7) +
           (c.is_active(1) ? std::fabs(as_number(c.values[1]) - 0.2) : 0.3);
  };
  const auto run = [&](Suggester& s, TrialId first, TrialId count) {
    std::vector<Suggestion> out;
    for (TrialId t = first; t < first + count; ++t) {
      out.push_back(s.suggest(t));
      s.started(t, out.back().config);
      s.reported(t, 1, loss(out.back().config), {});
      s.ended(t, TrialEnd::Completed);
    }
    return out;
  };
  for (const auto& spec : {bohb_spec(), mobster_spec(4)}) {
    BOOST_TEST_CONTEXT(sampler_keyword(spec.kind)) {
      const auto original = make_suggester(space, spec, false, 3);
      const auto before = run(*original, 0, 40);
      const auto next = run(*original, 40, 10);
      std::size_t model = 0;
      for (const auto& s : before) {
        model += s.info.origin == SuggestionOrigin::Model;
        const bool a = std::get<std::string>(s.config.values[0]) == "a";
        BOOST_TEST((s.config.active == std::vector<bool>{true, a, !a, true}));
      }
      BOOST_TEST(model > 10U);
      const auto rebuilt = make_suggester(space, spec, false, 3);
      for (TrialId t = 0; t < before.size(); ++t) {
        rebuilt->started(t, before[t].config);
        rebuilt->reported(t, 1, loss(before[t].config), {});
        rebuilt->ended(t, TrialEnd::Completed);
      }
      rebuilt->restore(before.back().info.position);
      const auto again = run(*rebuilt, 40, 10);
      for (std::size_t i = 0; i < next.size(); ++i)
        BOOST_TEST((again[i].config == next[i].config));
    }
  }
}
