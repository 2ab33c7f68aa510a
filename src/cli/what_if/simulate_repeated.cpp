// `slurmtune simulate --repeat K`: the summary of K seeds against the baseline, as text
// or JSON, and the any-time curve as CSV (--curve-out).
#include "cli/what_if/simulate_repeated.hpp"

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/replay/replay.hpp"

namespace slurmtune::cli {
namespace {

constexpr std::size_t kAnytimePoints = 200;

std::string json_or_null(const std::optional<double>& v) {
  return v ? core::json_number(*v) : "null";
}

std::string text_or_dash(const std::optional<double>& v) {
  return v ? core::format_double(std::round(*v * 1000) / 1000) : "-";
}

using Extract = std::optional<double> (*)(const core::SimulatedRun&);

core::Quartiles over_runs(const core::RepeatedSeries& series, Extract extract, bool lower_better) {
  std::vector<std::optional<double>> values;
  for (const auto& run : series.runs)
    values.push_back(extract(run));
  return core::quartiles(values, lower_better);
}

std::optional<double> time_to_target(const core::SimulatedRun& r) {
  return r.summary.time_to_target_s;
}
std::optional<double> trials_started(const core::SimulatedRun& r) {
  return static_cast<double>(r.summary.final.started);
}
std::optional<double> compute(const core::SimulatedRun& r) {
  return r.compute_s;
}
std::optional<double> final_best(const core::SimulatedRun& r) {
  return r.summary.final.best_value;
}
std::optional<double> final_hypervolume(const core::SimulatedRun& r) {
  return r.hypervolume.empty() ? 0.0 : r.hypervolume.back().second;
}

struct SeriesFigures {
  core::Quartiles to_target, started, compute_s, best, hypervolume;
};

SeriesFigures figures(const core::RepeatedSeries& series, core::Mode mode) {
  return SeriesFigures{over_runs(series, time_to_target, true),
                       over_runs(series, trials_started, true), over_runs(series, compute, true),
                       over_runs(series, final_best, mode == core::Mode::Min),
                       over_runs(series, final_hypervolume, false)};
}

// Streams, not string sums: GCC 12 warns falsely (-Wrestrict) on long `"..." + s` chains.
std::string quartiles_json(const core::Quartiles& q) {
  std::ostringstream out;
  out << "{\"q25\":" << json_or_null(q.q25) << ",\"median\":" << json_or_null(q.median)
      << ",\"q75\":" << json_or_null(q.q75) << ",\"present\":" << q.present << "}";
  return out.str();
}

std::string quartiles_text(const core::Quartiles& q) {
  std::ostringstream out;
  out << text_or_dash(q.median) << " [" << text_or_dash(q.q25) << ", " << text_or_dash(q.q75)
      << "]";
  return out.str();
}

std::string series_json(const core::RepeatedSeries& series, const core::StudySpec& study) {
  const SeriesFigures f = figures(series, study.mode);
  std::ostringstream out;
  out << "{\"label\":" << core::json_quote(series.label) << ",\"seeds\":[";
  for (std::size_t i = 0; i < series.runs.size(); ++i)
    out << (i ? "," : "") << series.runs[i].seed;
  out << "],\"time_to_target_s\":" << quartiles_json(f.to_target)
      << ",\"trials_started\":" << quartiles_json(f.started)
      << ",\"compute_worker_s\":" << quartiles_json(f.compute_s)
      << ",\"best_value\":" << quartiles_json(f.best);
  if (study.multi_objective()) out << ",\"hypervolume\":" << quartiles_json(f.hypervolume);
  out << "}";
  return out.str();
}

// Baseline median time to target over the study's: how many times sooner it gets there.
std::optional<double> speedup(const core::RepeatedSimulation& sim) {
  const auto ours = over_runs(sim.study, time_to_target, true).median;
  const auto theirs = over_runs(sim.baseline, time_to_target, true).median;
  if (!ours || !theirs || *ours <= 0) return std::nullopt;
  return *theirs / *ours;
}

}  // namespace

void print_repeated_text(const core::StudySpec& study, const core::RepeatedSimulation& sim,
                         const std::string& objective, std::size_t workers) {
  const auto repeats = sim.study.runs.size();
  std::cout << "\nsimulated study '" << study.name << "' " << repeats << " times (seeds "
            << study.seed << ".." << study.seed + repeats - 1 << ") with " << workers
            << " workers on " << objective << "\n"
            << "  median [quartiles] over seeds; a target never reached counts as worst\n";
  for (const auto* series : {&sim.study, &sim.baseline}) {
    const SeriesFigures f = figures(*series, study.mode);
    std::cout << "  " << series->label << '\n'
              << "    best " << study.metric << "      " << quartiles_text(f.best) << '\n';
    if (study.multi_objective())
      std::cout << "    hypervolume     " << quartiles_text(f.hypervolume)
                << " (of the completed trials' Pareto front)\n";
    if (study.simulate.target)
      std::cout << "    time to target  " << quartiles_text(f.to_target) << " s ("
                << f.to_target.present << "/" << repeats << " reached "
                << core::format_double(*study.simulate.target) << ")\n";
    std::cout << "    trials started  " << quartiles_text(f.started) << '\n'
              << "    compute         " << quartiles_text(f.compute_s) << " worker-s\n";
  }
  if (const auto s = speedup(sim))
    std::cout << "  speed-up to target over the baseline: " << text_or_dash(*s) << "x\n";
  if (study.multi_objective() && !sim.reference.empty()) {
    std::cout << "  hypervolume measured to the losses (";
    for (std::size_t k = 0; k < sim.reference.size(); ++k)
      std::cout << (k ? ", " : "") << text_or_dash(sim.reference[k]);
    std::cout << "), every run's worst completed loss of each objective x 1.1 (maximised "
                 "objectives negated); --curve-out has it over time\n";
  }
}

void print_repeated_json(const core::StudySpec& study, const core::RepeatedSimulation& sim,
                         const std::string& objective_json, double wall_s) {
  std::cout << "{\"study\":" << core::json_quote(study.name)
            << ",\"repeats\":" << sim.study.runs.size() << ",\"objective\":" << objective_json
            << ",\"target\":" << json_or_null(study.simulate.target)
            << ",\"study_runs\":" << series_json(sim.study, study)
            << ",\"baseline\":" << series_json(sim.baseline, study)
            << ",\"speedup_to_target\":" << json_or_null(speedup(sim))
            << ",\"wall_s\":" << core::json_number(wall_s) << "}\n";
}

void write_anytime_csv(const std::string& path, const core::StudySpec& study,
                       const core::RepeatedSimulation& sim) {
  std::ofstream out(path);
  if (!out) throw InputError(path + ": cannot write the any-time curve (--curve-out)");
  const bool several = study.multi_objective();
  out << "series,label,time_s,best_q25,best_median,best_q75,runs_with_value"
      << (several ? ",hypervolume_q25,hypervolume_median,hypervolume_q75" : "") << '\n';
  const auto grid = core::anytime_grid(sim, kAnytimePoints);
  const std::pair<const char*, const core::RepeatedSeries*> all[] = {{"study", &sim.study},
                                                                     {"baseline", &sim.baseline}};
  for (const auto& [name, series] : all) {
    if (series->runs.empty()) continue;
    for (const double t : grid) {
      std::vector<std::optional<double>> values;
      for (const auto& run : series->runs)
        values.push_back(core::best_at(run.best, t));
      const auto q = core::quartiles(values, study.mode == core::Mode::Min);
      const auto cell = [](const std::optional<double>& v) {
        return v ? core::json_number(*v) : std::string();
      };
      out << name << ",\"" << series->label << "\"," << core::json_number(t) << ',' << cell(q.q25)
          << ',' << cell(q.median) << ',' << cell(q.q75) << ',' << q.present;
      if (several) {  // before a run's first completion its hypervolume is 0
        std::vector<std::optional<double>> volumes;
        for (const auto& run : series->runs)
          volumes.push_back(core::best_at(run.hypervolume, t).value_or(0.0));
        const auto hv = core::quartiles(volumes, false);
        out << ',' << cell(hv.q25) << ',' << cell(hv.median) << ',' << cell(hv.q75);
      }
      out << '\n';
    }
  }
  if (!out.flush()) throw InputError(path + ": writing the any-time curve failed");
}

}  // namespace slurmtune::cli
