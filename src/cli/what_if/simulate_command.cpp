#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <thread>
#include <vector>

#include "cli/options.hpp"
#include "cli/what_if/simulate_repeated.hpp"
#include "config/study_file.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/number_text.hpp"
#include "core/objectives/pareto.hpp"
#include "core/replay/replay.hpp"
#include "core/search/sampler_spec.hpp"
#include "core/simulation/curve_csv.hpp"
#include "core/simulation/simulation.hpp"
#include "core/space/param_value.hpp"
#include "core/study/prior_start.hpp"
#include "store/recorded_curves.hpp"
#include "store/simulation_recorder.hpp"
#include "store/warm_start.hpp"

namespace slurmtune::cli {
namespace {

std::string best_text(const std::optional<double>& best) {
  return best ? core::format_double(*best) : "-";
}

class ProgressPrinter final : public core::SimulationObserver {
 public:
  ProgressPrinter(const core::StudySpec& study, std::uint64_t max_trials)
      : study_(study), max_trials_(max_trials) {}
  void progress(const core::SimulationProgress& p) override {
    std::printf(
        "[t=%.1fs] started %llu/%llu  running %llu  paused %llu  completed %llu  "
        "stopped %llu  reports %llu  best %s %s\n",
        p.time_s, static_cast<unsigned long long>(p.started),
        static_cast<unsigned long long>(max_trials_), static_cast<unsigned long long>(p.running),
        static_cast<unsigned long long>(p.paused), static_cast<unsigned long long>(p.completed),
        static_cast<unsigned long long>(p.stopped), static_cast<unsigned long long>(p.reports),
        study_.metric.c_str(), best_text(p.best_value).c_str());
  }

 private:
  const core::StudySpec& study_;
  std::uint64_t max_trials_;
};

// Several objectives: how many completed trials the front holds.
void print_front_size(const core::StudySpec& study,
                      const std::vector<core::CompletedPoint>& completed) {
  std::vector<core::ParetoPoint> points;
  for (const auto& c : completed)
    points.push_back({c.loss, std::nullopt});
  std::cout << "  front      " << core::pareto_front(points, false).size()
            << " trial(s) on the Pareto front of " << completed.size() << " completed"
            << (study.constraints.empty()
                    ? " (slurmtune best on the results file lists them)\n"
                    : "; constraint metrics are not simulated, so outputs count every trial "
                      "infeasible\n");
}

// What the simulated trials run on, in words and as JSON.
struct ObjectiveInfo {
  std::string text, json;
};

ObjectiveInfo describe_objective(const core::StudySpec& study, const core::CurveTable* table) {
  if (!table)
    return {"objective " + study.simulate.objective,
            "{\"synthetic\":" + core::json_quote(study.simulate.objective) + "}"};
  std::string text = "curves " + table->source() + " (" +
                     std::to_string(table->configurations().size()) + " configurations, " +
                     std::to_string(table->point_count()) + " reports";
  if (table->excluded())
    text += "; " + std::to_string(table->excluded()) + " outside the search space left out, e.g. " +
            table->excluded_example();
  const double best = table->best_value(study.mode);
  return {text + ")",
          "{\"curves\":" + core::json_quote(table->source()) +
              ",\"configurations\":" + std::to_string(table->configurations().size()) +
              ",\"curve_count\":" + std::to_string(table->curve_count()) +
              ",\"reports\":" + std::to_string(table->point_count()) +
              ",\"excluded\":" + std::to_string(table->excluded()) +
              ",\"best_value\":" + (std::isnan(best) ? "null" : core::json_number(best)) + "}"};
}

// A results file (HDF5 signature) or a CSV table.
core::CurveTable load_curve_table(const std::string& path, const core::StudySpec& study) {
  core::require_regular_file(path, "recorded curves (a results file or a CSV table)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the recorded curves (does it exist?)");
  char magic[8] = {};
  in.read(magic, sizeof magic);
  if (in.gcount() == 8 && std::string(magic, 8) == "\x89HDF\r\n\x1a\n")
    return store::read_recorded_curves(path, study);
  in.clear();
  in.seekg(0);
  return core::read_curve_csv(in, path, study);
}

// --curves, else [simulate] curves (relative to the study file's folder).
std::optional<std::string> curves_path(const po::variables_map& vm, const core::StudySpec& study) {
  if (vm.count("curves")) return vm["curves"].as<std::string>();
  if (!study.simulate.curves) return std::nullopt;
  const std::filesystem::path file(*study.simulate.curves);
  if (file.is_absolute()) return file.string();
  return (std::filesystem::path(study.path).parent_path() / file).lexically_normal().string();
}

// Milliseconds per decision, three significant digits.
std::string mean_ms(double seconds, std::uint64_t count) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", 1e3 * seconds / static_cast<double>(count));
  return text;
}

void print_summary(const core::StudySpec& study, const core::SimulationSummary& s,
                   std::size_t workers, const ObjectiveInfo& objective, double wall_s) {
  const auto& f = s.final;
  std::cout << "\nsimulated study '" << study.name << "' with " << workers << " workers ("
            << core::scheduler_keyword(study.scheduler.type) << ", sampler "
            << core::sampler_keyword(study.sampler.kind) << ", " << objective.text << ")\n"
            << "  trials     started " << f.started << ", completed " << f.completed << ", stopped "
            << f.stopped << ", reports " << f.reports << '\n'
            << "  makespan   " << core::format_double(s.makespan_s) << " s virtual, utilisation "
            << core::format_double(s.utilisation) << '\n';
  if (s.ended_as_recorded)
    std::cout << "  recorded   " << s.ended_as_recorded
              << " trials ended where their recorded run ended, " << s.beyond_recorded
              << " of them promoted past it\n";
  if (s.best_trial)
    std::cout << "  best       " << study.metric << " = " << best_text(f.best_value) << " (trial "
              << *s.best_trial << ", " << study.scheduler.resource << " "
              << core::json_number(s.best_step) << ")\n"
              << "  config     " << study.space.to_json(s.best_config) << '\n';
  if (study.simulate.target || s.time_to_target_s)
    std::cout << "  target     "
              << (s.time_to_target_s
                      ? "reached at " + core::format_double(*s.time_to_target_s) + " s"
                      : std::string("not reached"))
              << '\n';
  if (const auto& a = s.allocation)
    std::cout << "  allocations " << a->allocations << " used, holding "
              << core::format_double(std::round(a->charged_s)) << " worker-seconds; busy "
              << core::format_double(std::round(a->busy_s)) << ", of which start-up "
              << core::format_double(std::round(a->startup_s)) << " and lost "
              << core::format_double(std::round(a->lost_s)) << " (" << a->killed
              << " attempts killed at an allocation's end)\n";
  if (s.decisions_charged)
    std::cout << "  decisions  " << s.decisions_charged << " charged to the virtual clock, "
              << core::format_double(s.decision_s) << " s in all (mean "
              << mean_ms(s.decision_s, s.decisions_charged) << " ms, measured)\n";
  std::cout << "  wall time  " << core::format_double(wall_s) << " s\n";
}

void print_json(const core::StudySpec& study, const core::SimulationSummary& s,
                const ObjectiveInfo& objective, double wall_s) {
  const auto& f = s.final;
  std::cout << "{\"study\":" << core::json_quote(study.name) << ",\"started\":" << f.started
            << ",\"completed\":" << f.completed << ",\"stopped\":" << f.stopped
            << ",\"reports\":" << f.reports << ",\"makespan_s\":" << core::json_number(s.makespan_s)
            << ",\"utilisation\":" << core::json_number(s.utilisation)
            << ",\"best_value\":" << (f.best_value ? core::json_number(*f.best_value) : "null")
            << ",\"best_trial\":" << (s.best_trial ? std::to_string(*s.best_trial) : "null")
            << ",\"best_config\":" << (s.best_trial ? study.space.to_json(s.best_config) : "null")
            << ",\"time_to_target_s\":"
            << (s.time_to_target_s ? core::json_number(*s.time_to_target_s) : "null")
            << ",\"ended_as_recorded\":" << s.ended_as_recorded
            << ",\"beyond_recorded\":" << s.beyond_recorded << ",\"objective\":" << objective.json
            << ",\"wall_s\":" << core::json_number(wall_s)
            << ",\"decisions_charged\":" << s.decisions_charged
            << ",\"decision_s\":" << core::json_number(s.decision_s);
  if (const auto& a = s.allocation)
    std::cout << ",\"allocations\":" << a->allocations
              << ",\"charged_worker_s\":" << core::json_number(a->charged_s)
              << ",\"busy_worker_s\":" << core::json_number(a->busy_s)
              << ",\"startup_worker_s\":" << core::json_number(a->startup_s)
              << ",\"lost_worker_s\":" << core::json_number(a->lost_s)
              << ",\"killed\":" << a->killed;
  std::cout << "}\n";
}

// Runs jobs 0 .. count-1 on `threads` threads; the first exception any job threw is
// rethrown here once all have finished.
void run_in_threads(std::size_t count, std::size_t threads,
                    const std::function<void(std::size_t)>& job) {
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(count);
  const auto work = [&] {
    for (std::size_t i; (i = next++) < count;) {
      try {
        job(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::min(threads, count); ++t)
    pool.emplace_back(work);
  work();
  for (auto& thread : pool)
    thread.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
}

int simulate_repeated_command(const po::variables_map& vm, const core::StudySpec& study,
                              const core::SimulationOptions& sim, const ObjectiveInfo& objective) {
  const auto repeats = vm["repeat"].as<std::uint64_t>();
  if (repeats == 0) throw InputError("--repeat must be at least 1");
  if (vm.count("output"))
    throw InputError("--repeat cannot be recorded with --output; record one seed without --repeat");
  const auto jobs = vm["jobs"].as<std::size_t>();
  if (jobs == 0) throw InputError("--jobs must be at least 1");
  const auto start = std::chrono::steady_clock::now();
  const auto runs = core::simulate_repeated(
      study, sim, repeats, [jobs](std::size_t count, const std::function<void(std::size_t)>& job) {
        run_in_threads(count, jobs, job);
      });
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (vm.count("curve-out")) write_anytime_csv(vm["curve-out"].as<std::string>(), study, runs);
  if (vm.count("json"))
    print_repeated_json(study, runs, objective.json, wall_s);
  else
    print_repeated_text(study, runs, objective.text, sim.workers);
  return kSuccess;
}

// --decision-cost: measured (each decision's own time on the virtual clock) by default
// for the model-based samplers, whose decisions cost milliseconds; free otherwise.
void set_decision_cost(const po::variables_map& vm, const core::StudySpec& study,
                       core::SimulationOptions& sim) {
  std::string mode = core::is_model_based(study.sampler.kind) ? "measured" : "free";
  if (vm.count("decision-cost")) mode = vm["decision-cost"].as<std::string>();
  if (mode != "measured" && mode != "free")
    throw InputError("--decision-cost: '" + mode + "' is neither 'measured' nor 'free'");
  if (mode == "measured")
    sim.decision_clock = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
}

}  // namespace

int simulate_command(const Args& args) {
  po::options_description options("simulate options");
  options.add_options()("study", po::value<std::string>()->required(), "study file (TOML)")(
      "workers,w", po::value<std::size_t>()->default_value(4), "simulated workers")(
      "max-trials,n", po::value<std::uint64_t>(), "override [study] max_trials")(
      "target", po::value<double>(), "override [simulate] target")(
      "seed", po::value<std::uint64_t>(), "override [study] seed")(
      "time-budget", po::value<double>(), "override [study] time_budget_s (virtual seconds)")(
      "json", "print the summary as one JSON object instead of text")(
      "output,o", po::value<std::string>(), "record the study in this results file")(
      "flush-interval", po::value<double>()->default_value(1.0),
      "with --output: seconds between flushes of the results file")(
      "allocation-s", po::value<double>(),
      "run in Slurm allocations of this many virtual seconds (requeued back to back)")(
      "end-margin", po::value<double>()->default_value(300),
      "with --allocation-s: seconds before each end that trials are told to suspend")(
      "startup-s", po::value<double>()->default_value(0),
      "virtual seconds each attempt spends before its first step")(
      "no-allocation-clock",
      "with --allocation-s: launch whatever fits a slot, as a naive "
      "orchestrator would (for comparison)")(
      "curves", po::value<std::string>(),
      "recorded learning curves (CSV table or results file) instead of [simulate] objective")(
      "reuse-configs", "with --curves: a recorded configuration may be drawn more than once")(
      "nearest-draws",
      "with --curves and the random sampler: each draw takes the configuration nearest to a "
      "random point of the space, as a model sampler's suggestion does (default: uniformly "
      "among the recorded configurations)")(
      "repeat", po::value<std::uint64_t>(),
      "run K seeds (seed, seed+1, ...) and the random-search baseline; summarise quartiles")(
      "jobs,j",
      po::value<std::size_t>()->default_value(std::max(1u, std::thread::hardware_concurrency())),
      "with --repeat: simulations run at once (default: every core)")(
      "decision-cost", po::value<std::string>(),
      "measured: each decision's measured time is charged to the virtual clock; free: "
      "decisions take no time, and a seed gives the same run everywhere (default: measured "
      "for the model-based samplers tpe, bohb and mobster, free otherwise)")(
      "curve-out", po::value<std::string>(),
      "write best-so-far against virtual time as CSV (quartiles over seeds with --repeat)")(
      "quiet,q", "no progress lines");
  po::positional_options_description positional;
  positional.add("study", 1);
  po::variables_map vm;
  if (!parse_options(args, "slurmtune simulate STUDY.toml [--workers N]", options, positional, vm))
    return kSuccess;
  auto study = config::load_study_file(vm["study"].as<std::string>());
  store::load_warm_start(study);
  core::SimulationOptions sim;
  sim.workers = vm["workers"].as<std::size_t>();
  sim.end_margin_s = vm["end-margin"].as<double>();
  sim.startup_s = vm["startup-s"].as<double>();
  sim.allocation_clock = !vm.count("no-allocation-clock");
  if (sim.startup_s < 0) throw InputError("--startup-s must be >= 0");
  if (vm.count("allocation-s")) {
    sim.allocation_s = vm["allocation-s"].as<double>();
    // A killed attempt re-runs steps the results file has already recorded; the file's
    // events describe one uninterrupted run, so the two do not mix (yet).
    if (vm.count("output")) throw InputError("--allocation-s cannot be recorded with --output");
  }
  // Overrides go into the study itself, so a recorded results file says what really ran.
  if (vm.count("max-trials")) {
    study.max_trials = vm["max-trials"].as<std::uint64_t>();
    study.scheduler.pbt.population = study.max_trials;
  }
  if (vm.count("target")) study.simulate.target = vm["target"].as<double>();
  if (vm.count("seed")) study.seed = vm["seed"].as<std::uint64_t>();
  if (vm.count("time-budget")) {
    study.time_budget_s = vm["time-budget"].as<double>();
    if (!(*study.time_budget_s > 0)) throw InputError("--time-budget must be > 0 seconds");
  }
  // The simulated workers are the trials it runs at once (as an allocation's are for `run`).
  core::resolve_prior_start(study, sim.workers);
  if (vm.count("nearest-draws") && study.sampler.kind != core::SamplerKind::Random)
    throw InputError("--nearest-draws is for the random sampler; [study] sampler is \"" +
                     std::string(core::sampler_keyword(study.sampler.kind)) +
                     "\", whose suggestions already go to the nearest configuration");
  std::optional<core::CurveTable> table;
  if (const auto path = curves_path(vm, study)) {
    table = load_curve_table(*path, study);
    sim.curves = &*table;
    sim.reuse_configurations = vm.count("reuse-configs") > 0;
    sim.nearest_random_draws = vm.count("nearest-draws") > 0;
  } else if (vm.count("reuse-configs") || vm.count("nearest-draws")) {
    throw InputError(
        std::string(vm.count("reuse-configs") ? "--reuse-configs" : "--nearest-draws") +
        " needs recorded curves (--curves or [simulate] curves)");
  }
  set_decision_cost(vm, study, sim);
  const ObjectiveInfo objective = describe_objective(study, sim.curves);
  if (vm.count("repeat")) return simulate_repeated_command(vm, study, sim, objective);
  const bool quiet = vm.count("quiet") || vm.count("json");
  ProgressPrinter printer(study, study.max_trials);
  core::SimulationObserver* observer = quiet ? nullptr : &printer;
  std::unique_ptr<store::StudyWriter> writer;
  std::unique_ptr<store::SimulationRecorder> recorder;
  if (vm.count("output")) {
    store::WriterOptions writer_options;
    writer_options.virtual_clock = true;
    writer_options.flush_interval_s = vm["flush-interval"].as<double>();
    writer = store::StudyWriter::create(vm["output"].as<std::string>(), study, writer_options);
    recorder = std::make_unique<store::SimulationRecorder>(*writer, observer);
    observer = recorder.get();
  }
  core::BestSoFarRecorder best(study, observer);
  const auto start = std::chrono::steady_clock::now();
  const auto summary = core::simulate_study(study, sim, &best);
  if (writer) writer->flush();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (vm.count("curve-out")) {
    core::RepeatedSimulation one;
    one.study.label = core::strategy_label(study);
    one.study.runs.push_back(
        core::SimulatedRun{study.seed, summary, best.take(), best.take_completed(), {}, 0});
    if (study.multi_objective()) core::measure_hypervolume(one);
    write_anytime_csv(vm["curve-out"].as<std::string>(), study, one);
  }
  if (vm.count("json"))
    print_json(study, summary, objective, wall_s);
  else
    print_summary(study, summary, sim.workers, objective, wall_s);
  if (study.multi_objective() && !vm.count("json") && !vm.count("curve-out"))
    print_front_size(study, best.take_completed());
  return kSuccess;
}

}  // namespace slurmtune::cli
