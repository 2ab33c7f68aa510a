// The resolved study as TOML (`slurmtune validate`), built with toml++ so quoting and
// number formatting follow the TOML spec (keys that are user names: toml_quoting.hpp).
#include <toml++/toml.h>

#include <sstream>

#include "config/section_readers.hpp"
#include "config/study_file.hpp"
#include "config/toml_quoting.hpp"

namespace slurmtune::config {
namespace {

const char* length_scale_prior_name(core::gp::LengthScalePrior prior) {
  switch (prior) {
    case core::gp::LengthScalePrior::DimensionScaled:
      return "dimension-scaled";
    case core::gp::LengthScalePrior::Sparse:
      return "sparse";
    case core::gp::LengthScalePrior::Fixed:
      break;
  }
  return "fixed";
}

void insert_value(toml::array& array, const core::ParamValue& v) {
  std::visit([&array](const auto& x) { array.push_back(x); }, v);
}

toml::table domain_table(const core::Domain& d) {
  toml::table t;
  t.is_inline(true);
  const std::string word(core::domain_keyword(d.kind));
  if (d.kind == core::DomainKind::Constant) {
    std::visit([&](const auto& x) { t.insert(word, x); }, d.values.front());
    return t;
  }
  toml::array values;
  if (d.kind == core::DomainKind::Choice || d.kind == core::DomainKind::Grid) {
    for (const auto& v : d.values)
      insert_value(values, v);
  } else if (d.is_integer()) {
    values.push_back(static_cast<std::int64_t>(d.low));
    values.push_back(static_cast<std::int64_t>(d.high));
    if (d.q > 0) values.push_back(static_cast<std::int64_t>(d.q));
  } else if (d.kind == core::DomainKind::SteppedUniform) {
    values.push_back(d.low);
    values.push_back(d.high);
    t.insert("step", d.q);
  } else {
    values.push_back(d.low);
    values.push_back(d.high);
    if (d.q > 0) values.push_back(d.q);
  }
  t.insert(word, std::move(values));
  return t;
}

void insert_or_auto(toml::table& t, std::string_view key, std::optional<std::int64_t> v) {
  if (v)
    t.insert(key, *v);
  else
    t.insert(key, "auto");
}

toml::table scheduler_table(const core::SchedulerSpec& s, const TrustDefaults& defaults) {
  toml::table t{{"type", std::string(core::scheduler_keyword(s.type))},
                {"resource", s.resource},
                {"max_t", s.max_t}};
  const bool optuna = s.semantics == core::Semantics::Optuna;
  const bool halving =
      s.type == core::SchedulerType::Asha || s.type == core::SchedulerType::Hyperband;
  if (halving) t.insert("semantics", optuna ? "optuna" : "ray");
  if (s.type == core::SchedulerType::Fifo) return t;
  if (s.type == core::SchedulerType::Pbt) {
    const auto& p = s.pbt;
    t.insert("perturbation_interval", p.perturbation_interval);
    t.insert("burn_in_period", p.burn_in_period);
    t.insert("quantile_fraction", p.quantile_fraction);
    t.insert("resample_probability", p.resample_probability);
    toml::array factors;
    for (const double f : p.perturbation_factors)
      factors.push_back(f);
    t.insert("perturbation_factors", std::move(factors));
    t.insert("synch", p.synch);
    toml::table mutations;
    for (const auto& m : p.mutations) {
      if (m.values.empty()) {
        mutations.insert(m.name, "resample");
        continue;
      }
      toml::array values;
      for (const auto& v : m.values)
        insert_value(values, v);
      mutations.insert(m.name, std::move(values));
    }
    t.insert("mutations", std::move(mutations));
    return t;
  }
  if (s.type == core::SchedulerType::Median) {
    t.insert("grace_period", s.grace_period);
    t.insert("min_samples_required", s.min_samples_required);
    return t;
  }
  t.insert("reduction_factor", s.reduction_factor);
  if (optuna) {
    insert_or_auto(t, "min_resource", s.min_resource);
    if (s.type == core::SchedulerType::Hyperband)
      insert_or_auto(t, "max_resource", s.max_resource);
    else
      t.insert("min_early_stopping_rate", s.min_early_stopping_rate);
    t.insert("bootstrap_count", s.bootstrap_count);
    return t;
  }
  t.insert("grace_period", s.grace_period);
  if (s.type == core::SchedulerType::Asha) {
    t.insert("brackets", s.brackets);
    t.insert("stop_last_trials", s.stop_last_trials);
  }
  // Written only when on: files from before the option resolve as they did.
  if (s.predict) t.insert("predict", true);
  if (s.eager_promotion) t.insert("eager_promotion", true);
  // Written where it or its default is not 0: a study with a prior that set it to 0 keeps 0.
  if (const auto trusted = s.trusted_trials.value_or(defaults.trusted_trials);
      trusted > 0 || defaults.trusted_trials > 0)
    t.insert("trusted_trials", trusted);
  // Written where it or its default is on: a study with a prior that set it off keeps it off.
  if (s.trust_check || defaults.trust_check) t.insert("trust_check", s.trust_check);
  // Written only when not the default: files from before the key resolve as they did.
  if (s.trust_check_above != core::kDefaultTrustCheckAbove)
    t.insert("trust_check_above", s.trust_check_above);
  // Written where it or its default is not "none" / 0, as trust_check: a file without them
  // was written before a waiver (store::StudyReader).
  if (s.trust_check_waiver != core::TrustWaiver::None ||
      defaults.trust_check_waiver != core::TrustWaiver::None)
    t.insert("trust_check_waiver", std::string(core::trust_waiver_keyword(s.trust_check_waiver)));
  if (s.trust_check_waiver_from_rung != 0 || defaults.trust_check_waiver_from_rung != 0)
    t.insert("trust_check_waiver_from_rung", s.trust_check_waiver_from_rung);
  if (s.type == core::SchedulerType::FreezeThaw) {
    t.insert("promotion_mix", s.promotion_mix);
    t.insert("cost", std::string(core::job_cost_keyword(s.job_cost)));
  }
  if (!s.milestones.empty()) {
    toml::array marks;
    for (const double m : s.milestones)
      marks.push_back(m);
    t.insert("milestones", std::move(marks));
  }
  return t;
}

toml::table study_table(const core::StudySpec& study) {
  toml::array metrics;
  for (const auto& m : study.metrics)
    metrics.push_back(m);
  toml::table t{{"name", study.name},
                {"metric", study.metric},
                {"metrics", std::move(metrics)},
                {"mode", study.mode == core::Mode::Min ? "min" : "max"},
                {"seed", static_cast<std::int64_t>(study.seed)},
                {"max_trials", static_cast<std::int64_t>(study.max_trials)},
                {"sampler", std::string(core::sampler_keyword(study.sampler.kind))}};
  if (study.time_budget_s) t.insert("time_budget_s", *study.time_budget_s);
  if (study.metric_threshold) t.insert("metric_threshold", *study.metric_threshold);
  if (study.multi_objective()) {  // one objective keeps the form older files have
    toml::array names, modes;
    for (const auto& o : study.objectives) {
      names.push_back(o.metric);
      modes.push_back(o.mode == core::Mode::Min ? "min" : "max");
    }
    t.insert_or_assign("metric", std::move(names));
    t.insert_or_assign("mode", std::move(modes));
  }
  if (!study.constraints.empty()) {
    toml::array constraints;
    for (const auto& c : study.constraints)
      constraints.push_back(c.text());
    t.insert("constraints", std::move(constraints));
  }
  return t;
}

// Every option of the chosen model-based sampler, defaults included; empty for the blind
// samplers (so files written before [sampler] existed resolve the same).
toml::table sampler_options_table(const core::SamplerSpec& s);

toml::table sampler_table(const core::SamplerSpec& s) {
  toml::table t = sampler_options_table(s);
  if (s.suggest_ahead)
    t.insert("suggest_ahead", true);  // absent when false, as older files have it
  if (!s.warm_start_files.empty()) {  // absent otherwise, as in older results files
    toml::array files;
    for (const auto& f : s.warm_start_files)
      files.push_back(f);
    t.insert("warm_start", std::move(files));
  }
  if (!s.prior_files.empty()) {  // absent otherwise, as in older results files
    toml::array files;
    for (const auto& f : s.prior_files)
      files.push_back(f);
    t.insert("prior", std::move(files));
    t.insert("prior_share", s.mobster.prior_share);
    t.insert("prior_exact", static_cast<std::int64_t>(s.mobster.prior_exact));
    if (s.mobster.prior_startup)  // absent: every start-up (as in older results files)
      t.insert("prior_startup", static_cast<std::int64_t>(*s.mobster.prior_startup));
    // Always written since it became the default: absent, it was off (older results files).
    t.insert("prior_check", s.mobster.prior_check);
    t.insert("prior_model", s.mobster.prior_model);  // absent: off (older results files)
  }
  return t;
}

toml::table sampler_options_table(const core::SamplerSpec& s) {
  if (s.kind == core::SamplerKind::Tpe) {
    const auto& o = s.tpe;
    toml::table t{{"semantics", tpe_semantics(o)},
                  {"n_startup_trials", static_cast<std::int64_t>(o.n_startup_trials)},
                  {"n_ei_candidates", static_cast<std::int64_t>(o.n_ei_candidates)},
                  {"gamma_fraction", o.gamma_fraction},
                  {"gamma_max", static_cast<std::int64_t>(o.gamma_max)},
                  {"prior_weight", o.estimator.prior_weight},
                  {"consider_prior", o.estimator.consider_prior},
                  {"consider_magic_clip", o.estimator.consider_magic_clip},
                  {"consider_endpoints", o.estimator.consider_endpoints},
                  {"multivariate", o.estimator.multivariate},
                  {"constant_liar", o.constant_liar}};
    if (o.bins > 0) t.insert("bins", static_cast<std::int64_t>(o.bins));
    if (o.binned_from > 0) t.insert("binned_from", static_cast<std::int64_t>(o.binned_from));
    if (o.group) t.insert("group", true);  // absent when false, as older results files have it
    return t;
  }
  if (s.kind == core::SamplerKind::Bohb) {
    const auto& o = s.bohb;
    toml::table t{{"top_n_percent", o.top_n_percent},
                  {"num_samples", static_cast<std::int64_t>(o.num_samples)},
                  {"random_fraction", o.random_fraction},
                  {"bandwidth_factor", o.bandwidth_factor},
                  {"min_bandwidth", o.min_bandwidth}};
    if (o.min_points_in_model)
      t.insert("min_points_in_model", static_cast<std::int64_t>(*o.min_points_in_model));
    return t;
  }
  if (s.kind == core::SamplerKind::Mobster) {
    const auto& o = s.mobster;
    toml::table t{
        {"n_startup_trials", static_cast<std::int64_t>(o.n_startup_trials)},
        {"num_candidates", static_cast<std::int64_t>(o.num_candidates)},
        {"local_candidates", static_cast<std::int64_t>(o.local_candidates)},
        {"max_observations", static_cast<std::int64_t>(o.max_observations)},
        {"max_fit_observations", static_cast<std::int64_t>(o.max_fit_observations)},
        {"max_pending", static_cast<std::int64_t>(o.max_pending)},
        {"wave", static_cast<std::int64_t>(o.wave)},
        {"random_fraction", o.random_fraction},
        {"refit_growth", o.refit_growth},
        {"fit_iterations", static_cast<std::int64_t>(o.fit_iterations)},
        {"rung_weighting",
         o.rung_weighting == core::RungWeighting::HyperTune ? "hyper-tune" : "first-rung"},
        {"length_scale_prior", length_scale_prior_name(o.length_scale_prior)},
        {"input_warping", o.input_warping},
        {"exchangeable_choices", o.exchangeable_choices},
        {"target_transform",
         o.target_transform == core::gp::TargetTransform::Copula ? "copula" : "standardise"},
        {"startup_design", o.startup_design == core::StartupDesign::Sobol ? "sobol" : "random"},
        {"acquisition", o.acquisition == core::Acquisition::Mean       ? "mean"
                        : o.acquisition == core::Acquisition::Thompson ? "thompson"
                                                                       : "ei"},
        {"greedy_share", o.greedy_share},
        {"surrogate", o.surrogate == core::Surrogate::RandomForest ? "random-forest" : "gp"},
        {"cost_exponent", o.cost_exponent},
        {"cost_cooling_s", o.cost_cooling_s},
        {"trust_region", o.trust_region},
        {"trust_region_share", o.trust_region_share},
        {"trust_region_inputs",
         o.trust_region_inputs == core::TrustRegionInputs::Short ? "short" : "all"}};
    if (o.surrogate == core::Surrogate::RandomForest)
      for (const auto key : kKernelKeys)
        t.erase(key);
    // The reader refuses a share, or inputs, without the box they describe.
    if (!o.trust_region) {
      t.erase("trust_region_share");
      t.erase("trust_region_inputs");
    }
    return t;
  }
  if (s.kind == core::SamplerKind::Nsga2) {
    const auto& o = s.nsga2;
    toml::table t{{"population_size", static_cast<std::int64_t>(o.population_size)},
                  {"crossover_prob", o.crossover_prob},
                  {"swapping_prob", o.swapping_prob}};
    if (o.mutation_prob) t.insert("mutation_prob", *o.mutation_prob);
    return t;
  }
  return {};
}

toml::table trial_table(const core::StudySpec& study) {
  toml::array command;
  for (const auto& arg : study.trial.command)
    command.push_back(arg);
  toml::table t{{"max_failures", study.trial.max_failures}};
  if (!study.trial.command.empty()) t.insert("command", std::move(command));
  if (study.trial.time_limit_s) t.insert("time_limit_s", *study.trial.time_limit_s);
  if (study.trial.report_timeout_s) t.insert("report_timeout_s", *study.trial.report_timeout_s);
  if (study.trial.mode == core::TrialSpec::Mode::Mpi) {
    toml::array program;
    for (const auto& arg : study.trial.program)
      program.push_back(arg);
    t.insert("mode", "mpi");
    t.insert("layout", study.trial.layout == core::TrialSpec::Layout::Steps ? "steps" : "split");
    t.insert("program", std::move(program));
  }
  return t;
}

toml::table resources_table(const core::ResourceSpec& r) {
  toml::table t{{"nodes", r.nodes},
                {"ntasks_per_node", r.ntasks_per_node},
                {"cpus_per_task", r.cpus_per_task},
                {"gpus_per_task", r.gpus_per_task}};
  if (r.ranks_per_trial) t.insert("ranks_per_trial", *r.ranks_per_trial);
  if (r.max_concurrent) t.insert("max_concurrent", *r.max_concurrent);
  if (r.gpu_bind) t.insert("gpu_bind", *r.gpu_bind);
  if (r.launch == core::ResourceSpec::Launch::Worker) t.insert("launch", "worker");
  return t;
}

toml::table simulate_table(const core::SimulationSpec& s) {
  toml::table t{{"objective", s.objective}, {"step_time_s", s.step_time_s}, {"noise", s.noise}};
  if (s.target) t.insert("target", *s.target);
  if (s.curves) t.insert("curves", *s.curves);
  return t;
}

// A parameter's domain with its `when`, if any.
toml::table parameter_table(const core::SearchSpace& space, const core::Parameter& p) {
  toml::table t = domain_table(p.domain);
  if (p.when.empty()) return t;
  toml::table when;
  when.is_inline(true);
  for (const auto& c : p.when) {
    toml::array values;
    for (const auto& v : c.values)
      insert_value(values, v);
    const std::string& parent = space.parameters()[c.parent].name;
    if (values.size() == 1)
      when.insert(parent, *values.get(0));
    else
      when.insert(parent, std::move(values));
  }
  t.insert("when", std::move(when));
  return t;
}

// One [[enqueue]] entry: its values in parameter order (toml++ sorts them in a table).
std::vector<std::pair<std::string, toml::array>> enqueued_values(
    const core::SearchSpace& space, const core::PartialConfiguration& entry) {
  std::vector<std::pair<std::string, toml::array>> out;
  for (std::size_t p = 0; p < space.size() && p < entry.values.size(); ++p) {
    if (!entry.values[p]) continue;
    toml::array value;  // a one-element array: a scalar node toml++ can hold
    insert_value(value, *entry.values[p]);
    out.emplace_back(space.parameters()[p].name, std::move(value));
  }
  return out;
}

toml::table resolved_table(const core::StudySpec& study) {
  toml::table search;
  for (const auto& p : study.space.parameters())
    search.insert(p.name, parameter_table(study.space, p));
  toml::table out{{"study", study_table(study)},
                  {"search", std::move(search)},
                  {"scheduler", scheduler_table(study.scheduler, trust_defaults(study))},
                  {"trial", trial_table(study)},
                  {"resources", resources_table(study.resources)},
                  {"simulate", simulate_table(study.simulate)}};
  if (auto sampler = sampler_table(study.sampler); !sampler.empty())
    out.insert("sampler", std::move(sampler));
  toml::table checkpoints;
  if (study.checkpoints.keep_per_trial)
    checkpoints.insert("keep_per_trial", *study.checkpoints.keep_per_trial);
  if (study.checkpoints.keep_ended) checkpoints.insert("keep_ended", *study.checkpoints.keep_ended);
  if (!study.checkpoints.folder.empty()) checkpoints.insert("folder", study.checkpoints.folder);
  if (study.checkpoints.node_local) checkpoints.insert("node_local", true);
  if (!checkpoints.empty()) out.insert("checkpoints", std::move(checkpoints));
  // Flattened as "enqueue.N" (from 1): an entry is compared whole.
  toml::table enqueue;
  for (std::size_t i = 0; i < study.sampler.enqueued.size(); ++i) {
    toml::table entry;
    entry.is_inline(true);
    for (auto& [name, value] : enqueued_values(study.space, study.sampler.enqueued[i]))
      entry.insert(name, *value.get(0));
    enqueue.insert(std::to_string(i + 1), std::move(entry));
  }
  if (!enqueue.empty()) out.insert("enqueue", std::move(enqueue));
  return out;
}

constexpr auto kFormat =
    toml::toml_formatter::default_flags | toml::format_flags::relaxed_float_precision;

// One `key = value` line: the key quoted here (a user's name), the value by toml++.
void write_entry(std::ostream& out, std::string_view key, const toml::node& value) {
  out << toml_key(key) << " = " << toml::toml_formatter{value, kFormat} << '\n';
}

}  // namespace

std::string to_toml(const core::StudySpec& study) {
  // Tables keyed by the user's names are written here, key by key: [search], whose order
  // is meaningful (the order in which parameters take sampler coordinates) while toml++
  // sorts keys, and PBT's [scheduler.mutations]; toml++ writes the rest.
  toml::table root = resolved_table(study);
  root.erase("search");
  root.erase("enqueue");
  toml::table mutations;
  if (auto* scheduler = root["scheduler"].as_table()) {
    if (auto* found = (*scheduler)["mutations"].as_table()) mutations = std::move(*found);
    scheduler->erase("mutations");
  }
  std::ostringstream out;
  out << toml::toml_formatter{root, kFormat} << "\n\n[search]\n";
  for (const auto& p : study.space.parameters())
    write_entry(out, p.name, parameter_table(study.space, p));
  if (!mutations.empty()) {
    out << "\n[scheduler.mutations]\n";
    for (const auto& [name, values] : mutations)
      write_entry(out, name.str(), values);
  }
  for (const auto& entry : study.sampler.enqueued) {
    out << "\n[[enqueue]]\n";
    for (const auto& [name, value] : enqueued_values(study.space, entry))
      write_entry(out, name, *value.get(0));
  }
  return out.str();
}

std::string sampler_options_json(const core::StudySpec& study) {
  std::ostringstream out;
  out << toml::json_formatter{sampler_table(study.sampler)};
  return out.str();
}

std::map<std::string, std::string> flatten_study(const core::StudySpec& study) {
  std::map<std::string, std::string> out;
  for (const auto& [table_name, table] : resolved_table(study)) {
    for (const auto& [key, value] : *table.as_table()) {
      std::ostringstream text;
      text << toml::toml_formatter{
          value, toml::toml_formatter::default_flags | toml::format_flags::relaxed_float_precision};
      out.emplace(std::string(table_name.str()) + "." + std::string(key.str()), text.str());
    }
  }
  return out;
}

std::string_view tpe_semantics(const core::tpe::TpeOptions& options) {
  return options.bins == 0 ? "optuna" : options.binned_from > 0 ? "auto" : "binned";
}

}  // namespace slurmtune::config
