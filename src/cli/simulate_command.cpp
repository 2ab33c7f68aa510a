#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/options.hpp"
#include "config/study_file.hpp"
#include "core/error.hpp"
#include "core/param_value.hpp"
#include "core/replay.hpp"
#include "core/simulation.hpp"
#include "store/simulation_recorder.hpp"

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

void print_summary(const core::StudySpec& study, const core::SimulationSummary& s,
                   std::size_t workers, double wall_s) {
  const auto& f = s.final;
  std::cout << "\nsimulated study '" << study.name << "' with " << workers << " workers ("
            << core::scheduler_keyword(study.scheduler.type) << ", sampler "
            << core::sampler_keyword(study.sampler) << ", objective " << study.simulate.objective
            << ")\n"
            << "  trials     started " << f.started << ", completed " << f.completed << ", stopped "
            << f.stopped << ", reports " << f.reports << '\n'
            << "  makespan   " << core::format_double(s.makespan_s) << " s virtual, utilisation "
            << core::format_double(s.utilisation) << '\n';
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
  std::cout << "  wall time  " << core::format_double(wall_s) << " s\n";
}

void print_json(const core::StudySpec& study, const core::SimulationSummary& s, double wall_s) {
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
            << ",\"wall_s\":" << core::json_number(wall_s);
  if (const auto& a = s.allocation)
    std::cout << ",\"allocations\":" << a->allocations
              << ",\"charged_worker_s\":" << core::json_number(a->charged_s)
              << ",\"busy_worker_s\":" << core::json_number(a->busy_s)
              << ",\"startup_worker_s\":" << core::json_number(a->startup_s)
              << ",\"lost_worker_s\":" << core::json_number(a->lost_s)
              << ",\"killed\":" << a->killed;
  std::cout << "}\n";
}

}  // namespace

int simulate_command(const Args& args) {
  po::options_description options("simulate options");
  options.add_options()("study", po::value<std::string>()->required(), "study file (TOML)")(
      "workers,w", po::value<std::size_t>()->default_value(4), "simulated workers")(
      "max-trials,n", po::value<std::uint64_t>(), "override [study] max_trials")(
      "target", po::value<double>(), "override [simulate] target")(
      "json", "print the summary as one JSON object instead of text")(
      "output,o", po::value<std::string>(), "record the study in this HDF5 study file")(
      "flush-interval", po::value<double>()->default_value(1.0),
      "with --output: seconds between flushes of the study file")(
      "allocation-s", po::value<double>(),
      "run in Slurm allocations of this many virtual seconds (requeued back to back)")(
      "end-margin", po::value<double>()->default_value(300),
      "with --allocation-s: seconds before each end that trials are told to suspend")(
      "startup-s", po::value<double>()->default_value(0),
      "virtual seconds each attempt spends before its first step")(
      "no-allocation-clock",
      "with --allocation-s: launch whatever fits a slot, as a naive "
      "orchestrator would (for comparison)")("quiet,q", "no progress lines");
  po::positional_options_description positional;
  positional.add("study", 1);
  po::variables_map vm;
  if (!parse_options(args, "slurmtune simulate STUDY.toml [--workers N]", options, positional, vm))
    return kSuccess;
  auto study = config::load_study_file(vm["study"].as<std::string>());
  core::SimulationOptions sim;
  sim.workers = vm["workers"].as<std::size_t>();
  sim.end_margin_s = vm["end-margin"].as<double>();
  sim.startup_s = vm["startup-s"].as<double>();
  sim.allocation_clock = !vm.count("no-allocation-clock");
  if (sim.startup_s < 0) throw InputError("--startup-s must be >= 0");
  if (vm.count("allocation-s")) {
    sim.allocation_s = vm["allocation-s"].as<double>();
    // A killed attempt re-runs steps the study file has already recorded; the file's
    // events describe one uninterrupted run, so the two do not mix (yet).
    if (vm.count("output")) throw InputError("--allocation-s cannot be recorded with --output");
  }
  // Overrides go into the study itself, so a recorded study file says what really ran.
  if (vm.count("max-trials")) study.max_trials = vm["max-trials"].as<std::uint64_t>();
  if (vm.count("target")) study.simulate.target = vm["target"].as<double>();
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
  const auto start = std::chrono::steady_clock::now();
  const auto summary = core::simulate_study(study, sim, observer);
  if (writer) writer->flush();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (vm.count("json"))
    print_json(study, summary, wall_s);
  else
    print_summary(study, summary, sim.workers, wall_s);
  return kSuccess;
}

}  // namespace slurmtune::cli
