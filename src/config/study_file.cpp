#include "config/study_file.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "config/name_forms.hpp"
#include "config/section_readers.hpp"
#include "config/table_reader.hpp"
#include "config/toml_depth.hpp"
#include "core/input_file.hpp"
#include "core/number_text.hpp"
#include "core/text.hpp"

namespace slurmtune::config {
namespace {

using core::Mode;

const toml::table& table_or_empty(const toml::table& root, std::string_view name,
                                  const std::string& source) {
  static const toml::table empty;
  const toml::node* n = root.get(name);
  if (!n) return empty;
  if (const toml::table* t = n->as_table()) return *t;
  throw StudyFileError(location(source, n->source()) + ": '" + std::string(name) +
                       "' must be a table; write it as [" + std::string(name) + "]");
}

// Seconds past this (about 31 years) are a mistake, and overflow the clocks they go into.
constexpr double kMaxSeconds = 1e9;

void require_positive(TableReader& r, std::string_view key, double value) {
  if (!(value > 0) || !std::isfinite(value))
    r.fail(key, "must be a positive number, got " + core::format_double(value));
}

void require_seconds(TableReader& r, std::string_view key, double value) {
  require_positive(r, key, value);
  if (value > kMaxSeconds)
    r.fail(key, "must be at most 1e9 seconds (about 31 years), got " + core::format_double(value));
}

// `metric` names the metric, or lists two or more objectives; `mode` is one keyword, or
// (several objectives) a list with one per objective.
void read_objectives(TableReader& r, core::StudySpec& study) {
  const toml::node* metric = r.node("metric");
  const std::string example =
      "the metric trials report and schedulers judge, e.g. metric = \"val_loss\", or several "
      "objectives, e.g. metric = [\"val_loss\", \"latency_ms\"]";
  if (!metric) r.fail("metric", "is required: " + example);
  std::vector<std::string> names;
  if (metric->is_array()) {
    names = *r.strings("metric");
    if (names.size() < 2)
      r.fail("metric", "lists " + std::to_string(names.size()) +
                           " objective(s); name one metric as a string (metric = \"val_loss\") "
                           "or list two or more");
    for (std::size_t i = 0; i < names.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (names[i] == names[j]) r.fail("metric", "lists '" + core::visible(names[i]) + "' twice");
  } else {
    names.push_back(r.string("metric").value_or(""));
    if (names.front().empty()) r.fail("metric", "is required: " + example);
  }
  std::vector<Mode> modes(names.size(), Mode::Min);
  const toml::node* mode = r.node("mode");
  if (mode && mode->is_array()) {
    const auto words = *r.strings("mode");
    if (words.size() != names.size())
      r.fail("mode", "lists " + std::to_string(words.size()) + " mode(s) for " +
                         std::to_string(names.size()) + " objective(s); give one per objective");
    for (std::size_t k = 0; k < words.size(); ++k) {
      if (words[k] != "min" && words[k] != "max")
        r.fail("mode", "'" + core::visible(words[k]) + "' is neither \"min\" nor \"max\"");
      modes[k] = words[k] == "max" ? Mode::Max : Mode::Min;
    }
  } else if (const auto word = r.keyword("mode", {"min", "max"})) {
    if (names.size() > 1)
      r.fail("mode", "is one mode for " + std::to_string(names.size()) +
                         " objectives; list one per objective, e.g. mode = [\"min\", \"max\"]");
    modes.front() = *word == "max" ? Mode::Max : Mode::Min;
  }
  for (std::size_t k = 0; k < names.size(); ++k)
    study.objectives.push_back({names[k], modes[k]});
}

// `constraints = ["mem_gb <= 40", ...]` on declared metrics.
void read_constraints(TableReader& r, core::StudySpec& study) {
  const auto texts = r.strings("constraints");
  if (!texts) return;
  for (const auto& text : *texts) {
    std::string shown(1, '\'');  // the constraint as written, quoted
    shown += core::visible(text);
    shown += '\'';
    std::string why;
    auto c = core::parse_constraint(text, why);
    if (!c) r.fail("constraints", shown + " " + why);
    if (std::find(study.metrics.begin(), study.metrics.end(), c->metric) == study.metrics.end())
      r.fail("constraints", shown + " constrains '" + core::visible(c->metric) +
                                "', which is not a declared metric; add it to [study] metrics");
    study.constraints.push_back(std::move(*c));
  }
}

void read_study(TableReader r, core::StudySpec& study) {
  const auto name = r.string("name");
  if (!name || name->empty()) r.fail("name", "is required, e.g. name = \"mlp-digits\"");
  if (const auto problem = core::name_problem(*name)) r.fail("name", *problem);
  study.name = *name;
  // seq, trial, step and time are the fixed columns of the results file's /metrics.
  const auto check_metric_name = [&r](std::string_view key, const std::string& m) {
    for (const std::string reserved : {"seq", "trial", "step", "time"})
      if (m == reserved)
        r.fail(key, "'" + reserved + "' is reserved (seq, trial, step, time); rename the metric");
    if (m.empty()) r.fail(key, "metric names must not be empty");
    if (const auto problem = core::name_problem(m))
      r.fail(key, "metric name '" + core::visible(m) + "' " + *problem);
  };
  read_objectives(r, study);
  LookalikeNames metric_names;
  const auto check_lookalike = [&r, &metric_names](std::string_view key, const std::string& m) {
    if (const auto twin = metric_names.add(m)) r.fail(key, lookalike_text("metric", m, *twin));
  };
  for (const auto& o : study.objectives) {
    check_metric_name("metric", o.metric);
    check_lookalike("metric", o.metric);
  }
  study.metric = study.objectives.front().metric;
  study.mode = study.objectives.front().mode;
  for (const auto& o : study.objectives)
    study.metrics.push_back(o.metric);
  if (const auto extra = r.strings("metrics"))
    for (const auto& m : *extra) {
      check_metric_name("metrics", m);
      check_lookalike("metrics", m);
      if (std::find(study.metrics.begin(), study.metrics.end(), m) == study.metrics.end())
        study.metrics.push_back(m);
    }
  read_constraints(r, study);
  if (const auto seed = r.integer("seed")) {
    if (*seed < 0) r.fail("seed", "must be >= 0");
    study.seed = static_cast<std::uint64_t>(*seed);
  }
  if (const auto n = r.integer("max_trials")) {
    if (*n < 1) r.fail("max_trials", "must be at least 1");
    study.max_trials = static_cast<std::uint64_t>(*n);
  }
  if (const auto budget = r.number("time_budget_s")) {
    require_seconds(r, "time_budget_s", *budget);
    study.time_budget_s = budget;
  }
  study.metric_threshold = r.number("metric_threshold");
  if (study.metric_threshold && !std::isfinite(*study.metric_threshold))
    r.fail("metric_threshold",
           "must be a finite number, got " + core::format_double(*study.metric_threshold));
  if (const auto sampler =
          r.keyword("sampler", {"random", "halton", "grid", "tpe", "bohb", "mobster", "nsga2"})) {
    study.sampler.kind = *core::sampler_kind_from_keyword(*sampler);
    study.sampler.named = true;
  }
  // numpy's RandomState, whose stream the tpe sampler reproduces, takes 32-bit seeds.
  if ((study.sampler.kind == core::SamplerKind::Tpe ||
       study.sampler.kind == core::SamplerKind::Bohb ||
       study.sampler.kind == core::SamplerKind::Nsga2) &&
      study.seed > 0xffffffffULL)
    r.fail("seed", "must be below 2^32 with sampler \"" +
                       std::string(core::sampler_keyword(study.sampler.kind)) + "\"");
  r.finish();
}

void read_trial(TableReader r, core::StudySpec& study) {
  if (const auto mode = r.keyword("mode", {"command", "mpi"}))
    study.trial.mode = *mode == "mpi" ? core::TrialSpec::Mode::Mpi : core::TrialSpec::Mode::Command;
  if (study.trial.mode == core::TrialSpec::Mode::Mpi) {
    const auto program = r.strings("program");
    if (!program || program->empty())
      r.fail("program",
             "mode = \"mpi\" needs program = [\"./my_trainer\", ...]: the MPI "
             "program that calls slurmtune::run_trials");
    study.trial.program = *program;
    if (const auto layout = r.keyword("layout", {"split", "steps"}))
      study.trial.layout =
          *layout == "steps" ? core::TrialSpec::Layout::Steps : core::TrialSpec::Layout::Split;
  }
  if (const auto command = r.strings("command")) {
    if (study.trial.mode == core::TrialSpec::Mode::Mpi)
      r.fail("command", "is for mode = \"command\"; with mode = \"mpi\" give program");
    if (command->empty())
      r.fail("command", "must name a program, e.g. [\"python3\", \"train.py\"]");
    study.trial.command = *command;
  }
  if (const auto n = r.integer("max_failures")) {
    if (*n < 0) r.fail("max_failures", "must be >= 0");
    study.trial.max_failures = *n;
  }
  for (auto [key, into] : {std::pair{"time_limit_s", &study.trial.time_limit_s},
                           std::pair{"report_timeout_s", &study.trial.report_timeout_s}})
    if (const auto seconds = r.number(key)) {
      require_seconds(r, key, *seconds);
      *into = seconds;
    }
  r.finish();
  // Every {placeholder} must name a parameter: a typo would otherwise reach argv.
  for (const auto& arg : study.trial.command) {
    for (std::size_t open = arg.find('{'); open != std::string::npos;
         open = arg.find('{', open + 1)) {
      if (open + 1 < arg.size() && arg[open + 1] == '{') {
        ++open;
        continue;
      }  // "{{" escape
      const std::size_t close = arg.find('}', open);
      if (close == std::string::npos)
        r.fail("command", "argument \"" + arg + "\" has an unclosed '{'");
      const std::string name = arg.substr(open + 1, close - open - 1);
      if (!study.space.index_of(name) && name != "trial_id" && name != "trial_dir") {
        std::vector<std::string> names = {"trial_id", "trial_dir"};
        for (const auto& p : study.space.parameters())
          names.push_back(p.name);
        r.fail("command", "placeholder {" + name + "} names no parameter of [search]" +
                              did_you_mean(name, names));
      }
    }
  }
  // An argument naming a conditional parameter is left out when it does not exist; a flag
  // in the argument before it would stay behind, with the next argument as its value.
  const auto& command = study.trial.command;
  for (std::size_t i = 1; i < command.size(); ++i) {
    const std::string& arg = command[i];
    if (arg.size() < 3 || arg.front() != '{' || arg.back() != '}') continue;
    const auto p = study.space.index_of(arg.substr(1, arg.size() - 2));
    if (p && !study.space.parameters()[*p].when.empty() && command[i - 1].starts_with("-"))
      r.fail("command", "argument \"" + arg + "\" is left out when " +
                            arg.substr(1, arg.size() - 2) +
                            " does not exist (its when does not hold), but \"" + command[i - 1] +
                            "\" before it would stay; write them as one argument, \"" +
                            command[i - 1] + "=" + arg + "\"");
  }
}

void read_resources(TableReader r, core::StudySpec& study) {
  auto& res = study.resources;
  // Far above any allocation (Slurm's own limits are 2^32 and below), and small enough
  // that nodes x ntasks_per_node x cpus_per_task x gpus_per_task cannot overflow.
  constexpr std::int64_t kMaxCount = 1 << 20;
  const auto positive = [&r](std::string_view key, std::int64_t& into, std::int64_t least) {
    if (const auto v = r.integer(key)) {
      if (*v < least) r.fail(key, "must be at least " + std::to_string(least));
      if (*v > kMaxCount) r.fail(key, "must be at most " + std::to_string(kMaxCount));
      into = *v;
    }
  };
  positive("nodes", res.nodes, 1);
  positive("ntasks_per_node", res.ntasks_per_node, 1);
  positive("cpus_per_task", res.cpus_per_task, 1);
  positive("gpus_per_task", res.gpus_per_task, 0);
  std::int64_t max_concurrent = 0;
  if (r.has("max_concurrent")) {
    positive("max_concurrent", max_concurrent, 1);
    res.max_concurrent = max_concurrent;
  }
  std::int64_t ranks_per_trial = 0;
  if (r.has("ranks_per_trial")) {
    positive("ranks_per_trial", ranks_per_trial, 1);
    if (study.trial.mode != core::TrialSpec::Mode::Mpi)
      r.fail("ranks_per_trial", "applies to [trial] mode = \"mpi\" only");
    res.ranks_per_trial = ranks_per_trial;
  }
  if (const auto bind = r.string("gpu_bind")) {
    // Passed to srun as one argument: Slurm's own forms only, nothing a shell or srun
    // would read as another option.
    if (bind->empty() ||
        bind->find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:,.") != std::string::npos)
      r.fail("gpu_bind", "'" + *bind +
                             "' is not a Slurm --gpu-bind value (e.g. \"closest\", \"single:1\", "
                             "\"map_gpu:0,1\", \"verbose,closest\")");
    if (res.gpus_per_task == 0)
      r.fail("gpu_bind", "applies to trials with GPUs: set gpus_per_task as well");
    res.gpu_bind = *bind;
  }
  if (const auto launch = r.keyword("launch", {"step", "worker"}); launch == "worker") {
    if (study.trial.mode != core::TrialSpec::Mode::Command)
      r.fail("launch", "\"worker\" runs command trials; [trial] mode = \"mpi\" has its own steps");
    res.launch = core::ResourceSpec::Launch::Worker;
  }
  r.finish();
}

void read_simulate(TableReader r, core::StudySpec& study) {
  auto& sim = study.simulate;
  if (const auto o = r.keyword("objective", {"bowl", "rastrigin", "schedule"})) sim.objective = *o;
  if (const auto t = r.number("step_time_s")) {
    require_positive(r, "step_time_s", *t);
    sim.step_time_s = *t;
  }
  if (const auto n = r.number("noise")) {
    if (!(*n >= 0)) r.fail("noise", "must be >= 0");
    sim.noise = *n;
  }
  sim.target = r.number("target");
  if (const auto curves = r.string("curves")) {
    if (curves->empty()) r.fail("curves", "is empty; name a CSV table or a study file");
    sim.curves = *curves;
  }
  r.finish();
}

// What a conditional space (`when`) goes with so far; each refusal names the way out.
// The most objectives MOTPE serves (five: 85 ms a suggestion on average over 1,000
// trials; six: 282 ms over 500, growing steeply).
constexpr std::size_t kMostMotpeObjectives = 5;

// Several objectives or constraints: what takes them into account, what refuses them.
void check_objectives(const toml::table& root, core::StudySpec& study, const std::string& source) {
  study.sampler.objectives = study.objectives;
  study.sampler.constraints = study.constraints;
  study.sampler.metric_columns = study.metrics;
  study.scheduler.objectives = study.objectives;
  study.scheduler.metric_columns = study.metrics;
  const auto sampler = study.sampler.kind;
  const auto fail = [&](std::string_view key, const std::string& why) {
    const auto& table = *root.get("study")->as_table();
    TableReader(table, "study", source).fail_at(*table.get(key), key, why);
  };
  const std::string keyword(core::sampler_keyword(sampler));
  const bool binned_tpe = sampler == core::SamplerKind::Tpe && study.sampler.tpe.bins > 0;
  const bool density_model =
      sampler == core::SamplerKind::Bohb || sampler == core::SamplerKind::Mobster || binned_tpe;
  const std::string which =
      binned_tpe ? "tpe's semantics = \"binned\"" : "sampler \"" + keyword + "\"";
  if (study.multi_objective()) {
    if (density_model)
      fail("metric", "lists several objectives, which " + which +
                         " does not take; use sampler = \"tpe\" (Optuna's MOTPE) or \"nsga2\" "
                         "(or random, halton, grid)");
    // MOTPE weighs its good trials by their hypervolume contributions (WFG, exponential in
    // the objectives), on the coordinator's one loop: at six objectives a suggestion took
    // 0.28 s on average over 500 trials and grows with the history, holding every report
    // meanwhile (doc/performance/engine.md#several-objectives-at-scale-issue-41-item-15).
    if (sampler == core::SamplerKind::Tpe && study.objectives.size() > kMostMotpeObjectives)
      fail("metric", "lists " + std::to_string(study.objectives.size()) +
                         " objectives; sampler \"tpe\" (MOTPE) serves at most " +
                         std::to_string(kMostMotpeObjectives) +
                         ": its suggestions would hold the coordinator's loop for seconds "
                         "as the study grows; use sampler = \"nsga2\"");
    const auto& scheduler = study.scheduler;
    if (scheduler.type != core::SchedulerType::Fifo && scheduler.type != core::SchedulerType::Asha)
      fail("metric", "lists several objectives; [scheduler] type \"" +
                         std::string(core::scheduler_keyword(scheduler.type)) +
                         "\" judges one metric; use \"asha\" (MO-ASHA) or \"fifo\"");
    if (scheduler.type == core::SchedulerType::Asha &&
        (scheduler.semantics == core::Semantics::Optuna || scheduler.brackets != 1))
      fail("metric",
           "lists several objectives: asha is then MO-ASHA, with Ray's rungs and one "
           "bracket; drop semantics = \"optuna\" and brackets");
    if (study.metric_threshold)
      fail("metric_threshold",
           "applies to one objective; a study with several has no single "
           "value to reach");
    if (!study.sampler.warm_start_files.empty())
      fail("metric",
           "lists several objectives; [sampler] warm_start takes studies of one "
           "objective only, for now");
    if (study.simulate.curves)
      fail("metric", "lists several objectives; [simulate] curves record one metric");
  }
  if (sampler == core::SamplerKind::Nsga2 && !study.sampler.warm_start_files.empty()) {
    const auto& table = *root.get("sampler")->as_table();
    TableReader(table, "sampler", source)
        .fail_at(*table.get("warm_start"), "warm_start",
                 "sampler \"nsga2\" breeds from its own generations only (Optuna's added "
                 "trials join none); use sampler = \"tpe\" to learn from earlier studies");
  }
  if (!study.constraints.empty() && density_model)
    fail("constraints", which +
                            " does not take constraints into account; use sampler = "
                            "\"tpe\" or \"nsga2\" (or a blind sampler, which marks "
                            "infeasible trials only)");
}

// tpe's `semantics = "auto"` where the binned estimator does not apply (several
// objectives, constraints, a conditional space, multivariate sampling) is Optuna's
// throughout, as `semantics = "optuna"`: what `validate` prints and the file records.
void settle_auto_tpe(core::StudySpec& study) {
  auto& o = study.sampler.tpe;
  if (study.sampler.kind != core::SamplerKind::Tpe || o.bins == 0 || o.binned_from == 0) return;
  if (study.multi_objective() || !study.constraints.empty() || study.space.conditional() ||
      o.estimator.multivariate) {
    o.bins = 0;
    o.binned_from = 0;
  }
}

void check_conditional_space(const toml::table& root, const core::StudySpec& study,
                             const std::string& source) {
  if (!study.space.conditional()) return;
  std::string why;
  const auto sampler = study.sampler.kind;
  if (sampler == core::SamplerKind::Grid)
    why =
        "sampler \"grid\" enumerates every combination of values, which a conditional "
        "space does not have; use random, halton or tpe";
  else if (sampler == core::SamplerKind::Tpe && study.sampler.tpe.estimator.multivariate &&
           study.sampler.tpe.constant_liar)
    why =
        "tpe with multivariate = true and constant_liar = true ranks running trials that "
        "may lack a parameter every finished trial has (Optuna 3.1 fails on it); drop one "
        "of the two";
  else if (sampler == core::SamplerKind::Tpe && study.sampler.tpe.bins > 0)
    why =
        "tpe's semantics = \"binned\" does not take conditional parameters yet; use "
        "semantics = \"optuna\"";
  else if (study.scheduler.type == core::SchedulerType::Pbt)
    why =
        "pbt mutates every parameter of a running trial, which a conditional parameter "
        "may not have; make the parameters unconditional";
  else if (study.simulate.curves)
    why =
        "[simulate] curves: recorded configurations have every parameter; a conditional "
        "space has not";
  if (why.empty()) return;
  for (const auto& p : study.space.parameters())
    if (!p.when.empty()) {
      const auto& search = *root.get("search")->as_table();
      TableReader(search, "search", source)
          .fail_at(*search.get(p.name), p.name, "has a when, but " + why);
    }
}

// A prior's trust keys the file does not give (config::trust_defaults).
void settle_trust_defaults(core::StudySpec& study) {
  const TrustDefaults defaults = trust_defaults(study);
  auto& s = study.scheduler;
  if (!s.trusted_trials) s.trusted_trials = defaults.trusted_trials;
  if (!s.trust_check_named) s.trust_check = defaults.trust_check;
  if (!s.trust_check_waiver_named) s.trust_check_waiver = defaults.trust_check_waiver;
  if (!s.trust_check_waiver_from_rung_named)
    s.trust_check_waiver_from_rung = defaults.trust_check_waiver_from_rung;
}

// trust_check_waiver_from_rung names where a waiver is weighed: none (the default without a
// prior, or "none" named) leaves it nothing to say.
void check_trust_waiver(const toml::table& root, const core::StudySpec& study,
                        const std::string& source) {
  const auto& s = study.scheduler;
  if (!s.trust_check_waiver_from_rung_named || s.trust_check_waiver != core::TrustWaiver::None)
    return;
  const auto& table = *root.get("scheduler")->as_table();
  TableReader(table, "scheduler", source)
      .fail_at(*table.get("trust_check_waiver_from_rung"), "trust_check_waiver_from_rung",
               std::string("needs trust_check_waiver (\"gain\", \"overtake\" or \"lesson\"): ") +
                   (s.trust_check_waiver_named
                        ? "with \"none\" a low rank in any rung ends the trust"
                        : "without a MOBSTER prior it is \"none\", and a low rank in any rung "
                          "ends the trust"));
}

// freeze_thaw lets the sampler's model choose the next job: only mobster has one, and
// it must be read on the coordinator's loop, where suggest_ahead changes it on a thread.
void check_freeze_thaw(const toml::table& root, const core::StudySpec& study,
                       const std::string& source) {
  if (study.scheduler.type != core::SchedulerType::FreezeThaw) return;
  if (study.sampler.suggest_ahead) {
    const auto& sampler = *root.get("sampler")->as_table();
    TableReader(sampler, "sampler", source)
        .fail_at(*sampler.get("suggest_ahead"), "suggest_ahead",
                 "cannot go with scheduler freeze_thaw, which asks the sampler's model at "
                 "every decision while suggestions made ahead change it on a thread of their "
                 "own; drop suggest_ahead (or use asha_promotion)");
  }
  if (study.sampler.kind == core::SamplerKind::Mobster) return;
  const auto& table = *root.get("scheduler")->as_table();
  TableReader(table, "scheduler", source)
      .fail_at(*table.get("type"), "type",
               "freeze_thaw lets the sampler's model choose which trial trains next, and "
               "sampler \"" +
                   std::string(core::sampler_keyword(study.sampler.kind)) +
                   "\" has none; set sampler = \"mobster\" in [study] (or use asha_promotion)");
}

// A study that names no sampler gets MOBSTER with Hyper-Tune's rung weighting where that
// was measured to reach good configurations sooner than random search with the same
// scheduler: one objective, no constraints, asha_promotion (doc/performance.md, "Claim
// tables of issue #43"; never later on any table). Elsewhere it was not measured, and a
// grid axis needs a blind sampler, so random stays.
void choose_default_sampler(const toml::table& root, core::StudySpec& study) {
  if (study.sampler.named || study.multi_objective() || !study.constraints.empty()) return;
  const auto* scheduler = root.get("scheduler") ? root.get("scheduler")->as_table() : nullptr;
  if (!scheduler || (*scheduler)["type"].value<std::string>() != "asha_promotion") return;
  for (const auto& p : study.space.parameters())
    if (p.domain.kind == core::DomainKind::Grid) return;
  study.sampler.kind = core::SamplerKind::Mobster;
  study.sampler.mobster.rung_weighting = core::RungWeighting::HyperTune;
}

}  // namespace

core::StudySpec parse_study(std::string_view text, const std::string& source) {
  toml::table root;
  check_key_depth(text, source);
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw StudyFileError(location(source, e.source()) +
                         ": not valid TOML: " + std::string(e.description()));
  }
  TableReader top(root, "top level", source);
  core::StudySpec study;
  study.path = source;
  study.text = std::string(text);
  if (!root.contains("study"))
    throw StudyFileError(source + ":1:1: missing the [study] table (name, metric, mode, ...)");
  for (const auto name : {"study", "search", "sampler", "enqueue", "scheduler", "trial",
                          "checkpoints", "resources", "simulate"})
    top.node(name);
  top.finish();
  read_study(TableReader(table_or_empty(root, "study", source), "study", source), study);
  if (!root.contains("search"))
    throw StudyFileError(source +
                         ":1:1: missing the [search] table; declare the "
                         "hyperparameters, e.g. lr = { loguniform = [1e-4, 1e-1] }");
  study.space =
      read_search_space(table_or_empty(root, "search", source), source, study.sampler.kind);
  choose_default_sampler(root, study);
  read_sampler(TableReader(table_or_empty(root, "sampler", source), "sampler", source),
               root.get("sampler"), study.sampler);
  study.sampler.enqueued = read_enqueue(root.get("enqueue"), study);
  read_scheduler(TableReader(table_or_empty(root, "scheduler", source), "scheduler", source),
                 study.space, study.scheduler);
  study.scheduler.pbt.population = study.max_trials;
  study.sampler.mobster.max_resource = study.scheduler.max_t;
  read_trial(TableReader(table_or_empty(root, "trial", source), "trial", source), study);
  read_checkpoints(TableReader(table_or_empty(root, "checkpoints", source), "checkpoints", source),
                   study);
  read_resources(TableReader(table_or_empty(root, "resources", source), "resources", source),
                 study);
  read_simulate(TableReader(table_or_empty(root, "simulate", source), "simulate", source), study);
  settle_auto_tpe(study);
  // The resolved values are what `validate` prints and the file records.
  settle_trust_defaults(study);
  check_trust_waiver(root, study, source);
  check_conditional_space(root, study, source);
  check_objectives(root, study, source);
  check_freeze_thaw(root, study, source);
  check_node_local_checkpoints(root, study, source);
  return study;
}

core::StudySpec load_study_file(const std::string& path) {
  core::require_regular_file(path, "a study file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StudyFileError(path + ": cannot open the study file (does it exist?)");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_study(text.str(), path);
}

}  // namespace slurmtune::config
