// `[sampler]`: the options of the model-based samplers (tpe, bohb, mobster).
#include <algorithm>
#include <cmath>
#include <string>

#include "config/section_readers.hpp"
#include "config/study_file.hpp"

namespace slurmtune::config {
namespace {

void read_count(TableReader& r, std::string_view key, std::size_t& into, std::int64_t least) {
  if (const auto v = r.integer(key)) {
    if (*v < least) r.fail(key, "must be at least " + std::to_string(least));
    into = static_cast<std::size_t>(*v);
  }
}

void read_flag(TableReader& r, std::string_view key, bool& into) {
  if (const auto v = r.boolean(key)) into = *v;
}

void read_tpe(TableReader& r, core::SamplerSpec& spec) {
  auto& o = spec.tpe;
  // "optuna": Optuna 3.1's suggestions exactly; "binned": its "above" density binned
  // once the history is large (TpeOptions::bins), for speed; "auto", the default:
  // Optuna's until `binned_from` trials have finished, binned from then on.
  const std::string semantics =
      r.keyword("semantics", {"auto", "optuna", "binned"}).value_or("auto");
  spec.tpe_semantics_named = r.has("semantics");
  if (semantics != "optuna") o.bins = 128;
  if (semantics == "auto") o.binned_from = core::tpe::TpeOptions::auto_binned_from;
  if (r.has("bins")) {
    if (semantics == "optuna") r.fail("bins", "applies to semantics = \"binned\" or \"auto\"");
    read_count(r, "bins", o.bins, 32);
  }
  if (r.has("binned_from")) {
    if (semantics != "auto") r.fail("binned_from", "applies to semantics = \"auto\" only");
    read_count(r, "binned_from", o.binned_from, 1);
  }
  read_count(r, "n_startup_trials", o.n_startup_trials, 0);
  read_count(r, "n_ei_candidates", o.n_ei_candidates, 1);
  read_in_range(r, "gamma_fraction", o.gamma_fraction, 1e-9, 1, "in (0, 1]");
  read_count(r, "gamma_max", o.gamma_max, 1);
  read_in_range(r, "prior_weight", o.estimator.prior_weight, 1e-300, 1e300, "positive");
  read_flag(r, "consider_prior", o.estimator.consider_prior);
  read_flag(r, "consider_magic_clip", o.estimator.consider_magic_clip);
  read_flag(r, "consider_endpoints", o.estimator.consider_endpoints);
  read_flag(r, "multivariate", o.estimator.multivariate);
  read_flag(r, "constant_liar", o.constant_liar);
  read_flag(r, "group", o.group);
  if (o.group && !o.estimator.multivariate)
    r.fail("group", "goes with multivariate = true (Optuna's group decomposes its joint draw)");
}

void read_bohb(TableReader& r, core::BohbOptions& o) {
  read_in_range(r, "top_n_percent", o.top_n_percent, 1, 99, "a percentage in [1, 99]");
  read_count(r, "num_samples", o.num_samples, 1);
  read_in_range(r, "random_fraction", o.random_fraction, 0, 1, "in [0, 1]");
  read_in_range(r, "bandwidth_factor", o.bandwidth_factor, 1e-9, 1e9, "positive");
  read_in_range(r, "min_bandwidth", o.min_bandwidth, 1e-12, 1, "in (0, 1]");
  if (r.has("min_points_in_model")) {
    std::size_t points = 0;
    read_count(r, "min_points_in_model", points, 1);
    o.min_points_in_model = points;
  }
}

// What only the Gaussian process has (a kernel, joint draws): set with a random forest, the
// key would be silently ignored.
void refuse_kernel_options(TableReader& r, const core::MobsterOptions& o) {
  // refit_growth and fit_iterations stay: the step-cost model (cost_exponent) is a GP.
  for (const auto key : kKernelKeys)
    if (r.has(key))
      r.fail(key,
             "sets the Gaussian process's kernel fit; surrogate = \"random-forest\" has no "
             "kernel (remove the key, or use surrogate = \"gp\")");
  if (o.acquisition == core::Acquisition::Thompson)
    r.fail("surrogate",
           "\"random-forest\" draws no joint samples; acquisition = \"thompson\" "
           "goes with surrogate = \"gp\"");
}

void read_mobster(TableReader& r, core::MobsterOptions& o) {
  read_count(r, "n_startup_trials", o.n_startup_trials, 0);
  read_count(r, "num_candidates", o.num_candidates, 1);
  read_count(r, "local_candidates", o.local_candidates, 0);
  read_count(r, "max_observations", o.max_observations, 8);
  read_count(r, "max_fit_observations", o.max_fit_observations, 8);
  read_count(r, "max_pending", o.max_pending, 0);
  read_count(r, "wave", o.wave, 0);
  read_in_range(r, "random_fraction", o.random_fraction, 0, 1, "in [0, 1]");
  read_in_range(r, "refit_growth", o.refit_growth, 1.01, 100, "in [1.01, 100]");
  std::size_t iterations = static_cast<std::size_t>(o.fit_iterations);
  read_count(r, "fit_iterations", iterations, 1);
  if (iterations > 10000) r.fail("fit_iterations", "must be at most 10000");
  o.fit_iterations = static_cast<int>(iterations);
  if (r.has("rung_weighting"))
    o.rung_weighting = r.keyword("rung_weighting", {"first-rung", "hyper-tune"}) == "hyper-tune"
                           ? core::RungWeighting::HyperTune
                           : core::RungWeighting::FirstRung;
  if (r.has("length_scale_prior")) {
    const auto prior = r.keyword("length_scale_prior", {"fixed", "dimension-scaled", "sparse"});
    o.length_scale_prior = prior == "dimension-scaled" ? core::gp::LengthScalePrior::DimensionScaled
                           : prior == "sparse"         ? core::gp::LengthScalePrior::Sparse
                                                       : core::gp::LengthScalePrior::Fixed;
  }
  read_flag(r, "input_warping", o.input_warping);
  read_flag(r, "exchangeable_choices", o.exchangeable_choices);
  read_flag(r, "trust_region", o.trust_region);
  if (r.has("trust_region_share")) {
    read_in_range(r, "trust_region_share", o.trust_region_share, 0, 1, "in [0, 1]");
    if (!o.trust_region)
      r.fail("trust_region_share",
             "is the share of candidates drawn from the trust region, which is off; set "
             "trust_region = true as well");
  }
  if (r.has("trust_region_inputs")) {
    o.trust_region_inputs = r.keyword("trust_region_inputs", {"all", "short"}) == "short"
                                ? core::TrustRegionInputs::Short
                                : core::TrustRegionInputs::All;
    if (!o.trust_region)
      r.fail("trust_region_inputs",
             "says which inputs the trust region confines, which is off; set trust_region = "
             "true as well");
  }
  if (r.has("target_transform"))
    o.target_transform = r.keyword("target_transform", {"standardise", "copula"}) == "copula"
                             ? core::gp::TargetTransform::Copula
                             : core::gp::TargetTransform::Standardise;
  if (r.has("startup_design"))
    o.startup_design = r.keyword("startup_design", {"random", "sobol"}) == "sobol"
                           ? core::StartupDesign::Sobol
                           : core::StartupDesign::Random;
  if (r.has("acquisition")) {
    const auto acquisition = r.keyword("acquisition", {"ei", "mean", "thompson"});
    o.acquisition = acquisition == "mean"       ? core::Acquisition::Mean
                    : acquisition == "thompson" ? core::Acquisition::Thompson
                                                : core::Acquisition::ExpectedImprovement;
  }
  if (r.has("greedy_share")) {
    read_in_range(r, "greedy_share", o.greedy_share, 0, 1, "in [0, 1]");
    if (o.greedy_share > 0 && o.acquisition != core::Acquisition::ExpectedImprovement)
      r.fail("greedy_share",
             "is the share of model trials that take the posterior mean instead of expected "
             "improvement, and goes with acquisition = \"ei\"");
  }
  if (r.has("surrogate"))
    o.surrogate = r.keyword("surrogate", {"gp", "random-forest"}) == "random-forest"
                      ? core::Surrogate::RandomForest
                      : core::Surrogate::GaussianProcess;
  if (o.surrogate == core::Surrogate::RandomForest) refuse_kernel_options(r, o);
  read_in_range(r, "cost_exponent", o.cost_exponent, 0, 4, "in [0, 4]");
  // A posterior mean or a draw of it may be negative: dividing it by a cost would not rank by it.
  if (o.cost_exponent > 0 && o.acquisition != core::Acquisition::ExpectedImprovement)
    r.fail("cost_exponent",
           "goes with acquisition = \"ei\" (a posterior mean or a draw of it "
           "is not divided by a cost)");
  if (r.has("cost_cooling_s")) {
    read_in_range(r, "cost_cooling_s", o.cost_cooling_s, 0, 1e12, "in [0, 1e12] seconds");
    if (o.cost_cooling_s > 0 && o.cost_exponent == 0)
      r.fail("cost_cooling_s",
             "cools the cost exponent, which is 0; set cost_exponent (e.g. 1) as well");
  }
}

// NSGAIISampler's options, with its checks.
void read_nsga2(TableReader& r, core::nsga2::Nsga2Options& o) {
  read_count(r, "population_size", o.population_size, 2);
  if (const auto p = r.number("mutation_prob")) {
    if (!(*p >= 0 && *p <= 1)) r.fail("mutation_prob", "must be in [0, 1]");
    o.mutation_prob = *p;
  }
  read_in_range(r, "crossover_prob", o.crossover_prob, 0, 1, "in [0, 1]");
  read_in_range(r, "swapping_prob", o.swapping_prob, 0, 1, "in [0, 1]");
}

// A list of results files (`warm_start`, `prior`), read by store::load_warm_start (config
// does not read HDF5), and where the key is, for the refusals of its files.
void read_result_files(TableReader& r, std::string_view key, std::vector<std::string>& files,
                       std::string& where) {
  const auto listed = r.strings(key);
  if (!listed) return;
  if (listed->empty()) r.fail(key, "lists no results file; name one, e.g. [\"last-month.h5\"]");
  for (const auto& f : *listed)
    if (f.empty()) r.fail(key, "names an empty path");
  files = *listed;
  where = r.where(*r.node(key));
}

}  // namespace

void read_sampler(TableReader reader, const toml::node* present, core::SamplerSpec& spec) {
  if (present && !core::is_model_based(spec.kind))
    throw StudyFileError(reader.where(*present) + ": [sampler]: sampler \"" +
                         std::string(core::sampler_keyword(spec.kind)) +
                         "\" has no options; [sampler] configures [study] sampler = \"tpe\", "
                         "\"bohb\", \"mobster\" or \"nsga2\"");
  if (spec.kind == core::SamplerKind::Tpe) read_tpe(reader, spec);
  if (spec.kind == core::SamplerKind::Bohb) read_bohb(reader, spec.bohb);
  if (spec.kind == core::SamplerKind::Mobster) {
    spec.mobster_wave_named = reader.has("wave");
    read_mobster(reader, spec.mobster);
  }
  if (spec.kind == core::SamplerKind::Nsga2) read_nsga2(reader, spec.nsga2);
  read_flag(reader, "suggest_ahead", spec.suggest_ahead);
  // Results files of earlier studies whose trials the model learns from first.
  read_result_files(reader, "warm_start", spec.warm_start_files, spec.warm_start_where);
  // Earlier studies of another task whose best configurations MOBSTER searches first.
  read_result_files(reader, "prior", spec.prior_files, spec.prior_where);
  if (!spec.prior_files.empty() && spec.kind != core::SamplerKind::Mobster)
    reader.fail("prior",
                "is read by sampler \"mobster\" alone (it draws its start-up trials "
                "and candidates where the earlier studies did best); use "
                "warm_start with sampler \"" +
                    std::string(core::sampler_keyword(spec.kind)) + "\"");
  if (spec.kind == core::SamplerKind::Mobster) {
    // How MOBSTER uses a prior: keys that mean nothing without one.
    if (spec.prior_files.empty())
      for (const std::string_view key :
           {"prior_share", "prior_exact", "prior_startup", "prior_check", "prior_model"})
        if (reader.has(key)) reader.fail(key, "needs prior (the results files of earlier studies)");
    if (reader.has("prior_share"))
      read_in_range(reader, "prior_share", spec.mobster.prior_share, 0, 1, "in [0, 1]");
    spec.prior_exact_named = reader.has("prior_exact");
    spec.prior_startup_named = reader.has("prior_startup");
    if (spec.prior_exact_named) read_count(reader, "prior_exact", spec.mobster.prior_exact, 0);
    if (spec.prior_startup_named) {
      std::size_t startup = 0;
      read_count(reader, "prior_startup", startup, 0);
      spec.mobster.prior_startup = startup;
    } else if (!spec.prior_files.empty()) {
      // As for a study of at most 11 trials at once, so that validate prints a value;
      // `run` and `simulate` resolve both defaults for the trials they run at once
      // (core::resolve_prior_start) before the results file records them.
      spec.mobster.prior_startup = core::default_prior_startup(spec.mobster.prior_exact);
    }
    spec.prior_check_named = reader.has("prior_check");
    if (spec.prior_check_named)
      read_flag(reader, "prior_check", spec.mobster.prior_check);
    else if (!spec.prior_files.empty())
      spec.mobster.prior_check = true;  // the default with a prior since 2026-12-04 (issue #64)
    read_flag(reader, "prior_model", spec.mobster.prior_model);
    if (spec.mobster.prior_model && spec.mobster.surrogate != core::Surrogate::GaussianProcess)
      reader.fail("prior_model",
                  "puts the earlier studies' observations into the Gaussian process as another "
                  "task; it goes with surrogate = \"gp\"");
  }
  reader.finish();
}

}  // namespace slurmtune::config
