// The decision state's snapshot (issue #63): a study simulated with its scheduler and
// sampler written and read back into new ones every few events decides exactly as the
// same study simulated without, for every scheduler and every sampler. A field a class
// forgot to write shows up as a different decision some time after a round trip.
#define BOOST_TEST_MODULE state_snapshot
#include <boost/test/unit_test.hpp>
#include <sstream>
#include <string>

#include "config/study_file.hpp"
#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/simulation/simulation.hpp"
#include "core/study/decision_state.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/suggester_factory.hpp"

using namespace slurmtune;

namespace {

// Every event of a run, as text: the run's fingerprint.
class EventLog final : public core::SimulationObserver {
 public:
  void trial_started(core::TrialId trial, const core::Configuration& config, int bracket,
                     const core::SuggestionInfo& info, double time_s) override {
    out_ << "start " << trial << " b" << bracket << " @" << core::format_double(time_s) << " w"
         << info.position.model_words << "/" << info.position.startup_words;
    for (const auto& value : config.values)
      out_ << " " << core::to_text(value);
    out_ << "\n";
  }
  void trial_resumed(core::TrialId trial, double time_s, const core::ResumeReason*) override {
    out_ << "resume " << trial << " @" << core::format_double(time_s) << "\n";
  }
  void trial_exploited(core::TrialId trial, const core::Exploit& e, double time_s) override {
    out_ << "exploit " << trial << " from " << e.donor << " at "
         << core::format_double(e.donor_step) << " " << e.operations << " @"
         << core::format_double(time_s) << "\n";
  }
  void reported(core::TrialId trial, double step, const std::vector<double>& metrics,
                const core::ReportOutcome& outcome, double time_s) override {
    out_ << "report " << trial << " " << core::format_double(step) << " "
         << core::format_double(metrics.at(0)) << " -> " << core::to_string(outcome.decision);
    if (outcome.cutoff) out_ << " cut " << core::format_double(*outcome.cutoff);
    if (outcome.prediction) out_ << " pred " << core::format_double(outcome.prediction->mean);
    out_ << " @" << core::format_double(time_s) << "\n";
  }
  void trial_ended(core::TrialId trial, core::TrialEnd how, double time_s) override {
    out_ << "end " << trial << " " << core::to_string(how) << " @" << core::format_double(time_s)
         << "\n";
  }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

std::string simulate(const core::StudySpec& spec, std::uint64_t round_trip_every) {
  core::SimulationOptions options;
  options.workers = 4;
  options.state_round_trip_every = round_trip_every;
  EventLog log;
  try {
    core::simulate_study(spec, options, &log);
  } catch (const std::exception& e) {
    return log.text() + "failed: " + e.what() + "\n";
  }
  return log.text();
}

// The first line where two logs differ, with its number.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream left(a), right(b);
  std::string l, r;
  for (int line = 1;; ++line) {
    const bool more_left = static_cast<bool>(std::getline(left, l));
    const bool more_right = static_cast<bool>(std::getline(right, r));
    if (!more_left && !more_right) return "none";
    if (l != r || more_left != more_right)
      return "line " + std::to_string(line) + ": '" + (more_left ? l : "(end)") + "' against '" +
             (more_right ? r : "(end)") + "'";
  }
}

const char* const kSearch = R"(
[search]
lr = { loguniform = [1e-4, 1e-1] }
width = { randint = [16, 512] }
opt = { choice = ["sgd", "adam"] }
)";

// One study: [study] lines, the sampler's table and the scheduler's.
core::StudySpec study(const std::string& study_lines, const std::string& tables,
                      int max_trials = 48) {
  const std::string text =
      "[study]\nname = \"snap\"\nseed = 7\nmax_trials = " + std::to_string(max_trials) + "\n" +
      study_lines + kSearch + tables + "\n[simulate]\nobjective = \"bowl\"\nnoise = 0.05\n";
  return config::parse_study(text, "snapshot.toml");
}

const std::string kAsha =
    "[scheduler]\ntype = \"asha\"\ngrace_period = 1\nreduction_factor = 3\nmax_t = 27\n";

void check_round_trips(const core::StudySpec& spec) {
  const std::string plain = simulate(spec, 0);
  BOOST_REQUIRE(!plain.empty());
  const auto failed = plain.find("failed: ");
  BOOST_REQUIRE_MESSAGE(failed == std::string::npos, plain.substr(std::min(failed, plain.size())));
  for (const std::uint64_t every : {1u, 7u}) {
    const std::string tripped = simulate(spec, every);
    BOOST_TEST(tripped == plain, "round trip every " << every << " event(s) changed the run at "
                                                     << first_difference(plain, tripped));
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_scheduler_decides_as_without_snapshots) {
  const std::string metric = "metric = \"loss\"\n";
  const std::vector<std::string> schedulers = {
      "[scheduler]\ntype = \"fifo\"\nmax_t = 9\n",
      kAsha,
      "[scheduler]\ntype = \"asha\"\nsemantics = \"optuna\"\nmin_resource = 1\nreduction_factor = "
      "3\nmax_t = 27\n",
      "[scheduler]\ntype = \"asha_promotion\"\ngrace_period = 1\nreduction_factor = 3\nmax_t = "
      "27\n",
      "[scheduler]\ntype = \"asha_promotion\"\ngrace_period = 1\nreduction_factor = 3\nmax_t = "
      "27\npredict = true\neager_promotion = true\n",
      // Trusted trials judged by rank and what came next: the rungs' gains, their entries
      // from below and each trust's passed rungs are state.
      "[scheduler]\ntype = \"asha_promotion\"\ngrace_period = 1\nreduction_factor = 3\nmax_t = "
      "27\ntrusted_trials = 4\ntrust_check = true\ntrust_check_waiver = \"gain\"\n",
      "[scheduler]\ntype = \"asha_promotion\"\ngrace_period = 1\nreduction_factor = 3\nmax_t = "
      "27\ntrusted_trials = 4\ntrust_check = true\ntrust_check_waiver = \"overtake\"\n",
      "[scheduler]\ntype = \"hyperband\"\nmax_t = 27\nreduction_factor = 3\n",
      "[scheduler]\ntype = \"hyperband\"\nsemantics = \"optuna\"\nmin_resource = 1\nmax_resource = "
      "27\nreduction_factor = 3\nmax_t = 27\n",
      "[scheduler]\ntype = \"median\"\nmax_t = 12\ngrace_period = 2\n",
  };
  for (const auto& tables : schedulers) {
    BOOST_TEST_CONTEXT(tables) {
      check_round_trips(study(metric, tables));
    }
  }
  // PBT: a population of 48 on 4 workers (trials wait their turn at perturbations, and a
  // donor may be exploited itself before the trial that clones it resumes).
  for (const std::string pbt :
       {"[scheduler]\ntype = \"pbt\"\nmax_t = 20\nperturbation_interval = 2\n"
        "[scheduler.mutations]\nlr = \"resample\"\nopt = [\"sgd\", \"adam\"]\n",
        "[scheduler]\ntype = \"pbt\"\nmax_t = 20\nperturbation_interval = 4\nsynch = true\n"
        "[scheduler.mutations]\nlr = \"resample\"\n"}) {
    BOOST_TEST_CONTEXT(pbt) {
      check_round_trips(study(metric, pbt, 16));
    }
  }
}

BOOST_AUTO_TEST_CASE(every_sampler_learns_as_without_snapshots) {
  const std::string metric = "metric = \"loss\"\n";
  const std::vector<std::pair<std::string, std::string>> samplers = {
      {"sampler = \"random\"\n", ""},
      {"sampler = \"halton\"\n", ""},
      {"sampler = \"tpe\"\n", "[sampler]\nsemantics = \"optuna\"\nn_startup_trials = 5\n"},
      {"sampler = \"tpe\"\n", "[sampler]\nsemantics = \"binned\"\nn_startup_trials = 5\n"},
      {"sampler = \"tpe\"\n",
       "[sampler]\nsemantics = \"optuna\"\nmultivariate = true\ngroup = true\nconstant_liar = "
       "true\nn_startup_trials = 5\n"},
      {"sampler = \"tpe\"\n", "[sampler]\nn_startup_trials = 5\nsuggest_ahead = true\n"},
      {"sampler = \"bohb\"\n", ""},
      {"sampler = \"mobster\"\n", ""},
      {"sampler = \"mobster\"\n", "[sampler]\nsuggest_ahead = true\nstartup_design = \"sobol\"\n"},
      {"sampler = \"mobster\"\n", "[sampler]\nacquisition = \"thompson\"\n"},
      {"sampler = \"mobster\"\n", "[sampler]\ngreedy_share = 0.5\n"},
      {"sampler = \"mobster\"\n", "[sampler]\nsurrogate = \"random-forest\"\n"},
      // The cooling reads the clock the snapshot keeps.
      {"sampler = \"mobster\"\n", "[sampler]\ncost_exponent = 1\ncost_cooling_s = 20\n"},
      // The trust region's side is rebuilt from the observations the snapshot keeps.
      {"sampler = \"mobster\"\n", "[sampler]\ntrust_region = true\n"},
      {"sampler = \"mobster\"\n", "[sampler]\ntrust_region = true\ntrust_region_share = 0.5\n"},
      {"sampler = \"mobster\"\n",
       "[sampler]\ntrust_region = true\ntrust_region_inputs = \"short\"\n"},
  };
  for (const auto& [line, table] : samplers) {
    BOOST_TEST_CONTEXT(line << table) {
      check_round_trips(study(metric + line, table + kAsha));
    }
  }
  // freeze_thaw asks MOBSTER's model which job comes next.
  check_round_trips(study(metric + "sampler = \"mobster\"\n",
                          "[scheduler]\ntype = \"freeze_thaw\"\ngrace_period = 1\nmax_t = "
                          "9\nreduction_factor = 3\n"));
}

BOOST_AUTO_TEST_CASE(several_objectives_decide_as_without_snapshots) {
  const std::string metrics = "metric = [\"loss\", \"latency\"]\nmode = [\"min\", \"min\"]\n";
  for (const std::string sampler : {"nsga2", "tpe", "random"}) {
    BOOST_TEST_CONTEXT(sampler) {
      check_round_trips(study(metrics + "sampler = \"" + sampler + "\"\n", kAsha));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_state_of_another_study_is_refused) {
  const auto asha = study("metric = \"loss\"\nsampler = \"tpe\"\n", kAsha);
  const auto fifo = study("metric = \"loss\"\n", "[scheduler]\ntype = \"fifo\"\nmax_t = 9\n");
  auto scheduler = core::make_scheduler(asha.scheduler, asha.mode, asha.seed, asha.name);
  auto suggester = core::make_suggester(asha.space, asha.sampler, false, asha.seed);
  const std::string bytes = core::save_decision_state(*scheduler, *suggester);
  auto other_scheduler = core::make_scheduler(fifo.scheduler, fifo.mode, fifo.seed, fifo.name);
  auto other_suggester = core::make_suggester(fifo.space, fifo.sampler, false, fifo.seed);
  BOOST_CHECK_THROW(core::load_decision_state(bytes, *other_scheduler, *other_suggester),
                    InputError);
  BOOST_CHECK_THROW(
      core::load_decision_state(bytes.substr(0, bytes.size() / 2), *scheduler, *suggester),
      InputError);
}
