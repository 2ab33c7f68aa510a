#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>

#include "cli/options.hpp"
#include "cli/results/damaged_file_guard.hpp"
#include "cli/results/study_tables.hpp"
#include "cli/results/tensorboard_export.hpp"
#include "core/number_text.hpp"
#include "core/replay/replay.hpp"
#include "store/schema.hpp"

namespace slurmtune::cli {
namespace {

// The study as `slurmtune replay` reads it: starts with their configurations, reports
// of the scheduled metric, resumptions, the close of admissions, ends and the start of
// each later session, in the order they happened (by sequence number), with the times
// step costs are learnt from.
void write_replay_log(const store::StudyReader& reader, std::ostream& out) {
  const auto trials = reader.trials();
  const auto& space = reader.spec().space;
  const auto& metrics = reader.spec().metrics;
  store::SessionBoundaries sessions(reader.sessions());
  const auto session_line = [&](std::uint64_t seq) {
    if (sessions.crossed(seq)) out << "{\"type\":\"session\"}\n";
  };
  reader.for_each_in_seq_order(
      reader.events(),
      [&](const store::EventRecord& e) {
        session_line(e.seq);
        if (e.kind == store::EventKind::Start && e.trial < trials.size()) {
          out << "{\"type\":\"start\",\"trial\":" << e.trial
              << ",\"bracket\":" << trials[e.trial].bracket
              << ",\"config\":" << space.to_json(trials[e.trial].config)
              << ",\"time\":" << core::json_number(e.time) << "}\n";
        } else if (e.kind == store::EventKind::Resume) {
          out << "{\"type\":\"resume\",\"trial\":" << e.trial
              << ",\"time\":" << core::json_number(e.time) << "}\n";
        } else if (e.kind == store::EventKind::Checkpoint) {
          // No step: a checkpoint the resumed study awaited that will never come.
          out << "{\"type\":\"checkpoint\",\"trial\":" << e.trial;
          if (!std::isnan(e.step)) out << ",\"step\":" << core::json_number(e.step);
          out << "}\n";
        } else if (e.kind == store::EventKind::Closed) {
          out << "{\"type\":\"close\"}\n";
        } else if (e.kind == store::EventKind::Reopen) {
          out << "{\"type\":\"reopen\",\"trial\":" << e.trial << "}\n";
        } else if (const auto how = store::trial_end_of(e.kind)) {
          out << "{\"type\":\"end\",\"trial\":" << e.trial << ",\"state\":\""
              << core::to_string(*how) << "\"";
          if (!std::isnan(e.step))
            out << ",\"step\":" << core::json_number(e.step)
                << ",\"value\":" << core::json_number(e.value);
          out << "}\n";
        }
      },
      [&](const store::MetricRecord& m) {
        session_line(m.seq);
        out << "{\"type\":\"report\",\"trial\":" << m.trial
            << ",\"step\":" << core::json_number(m.step)
            << ",\"value\":" << core::json_number(m.values.empty() ? NAN : m.values[0])
            << ",\"time\":" << core::json_number(m.time);
        // The other metrics a report carried: what samplers for several objectives and
        // constraints learn from.
        std::string others;
        for (std::size_t c = 1; c < m.values.size(); ++c)
          if (!std::isnan(m.values[c])) {
            if (!others.empty()) others += ',';
            others += core::json_quote(metrics[c]);
            others += ':';
            others += core::json_number(m.values[c]);
          }
        if (!others.empty()) out << ",\"metrics\":{" << others << "}";
        out << "}\n";
      });
}

int export_tensorboard_logs(const po::variables_map& vm) {
  if (!vm.count("output"))
    throw po::error("--format tensorboard writes a folder: name it with -o DIR");
  if (!vm["table"].defaulted())
    throw po::error("--format tensorboard exports the whole study; leave out --table");
  const std::string path = vm["study-file"].as<std::string>();
  DamagedFileGuard guard(path);
  const store::StudyReader reader(path);
  guard.opened();
  const auto dir = vm["output"].as<std::string>();
  const auto written = export_tensorboard(reader, dir);
  std::cout << "wrote " << dir << ": " << written.runs << " runs (one per trial) with "
            << written.scalars << " scalars and their HParams sessions; tensorboard --logdir "
            << dir << "\n";
  return kSuccess;
}

}  // namespace

int export_command(const Args& args) {
  po::options_description options("export options");
  options.add_options()("study-file", po::value<std::string>()->required(), "results file (HDF5)")(
      "table,t", po::value<std::string>()->default_value("trials"),
      "trials | metrics | events | checkpoints | exploits | replay (the log `slurmtune replay` "
      "reads)")("format,f", po::value<std::string>()->default_value("csv"),
                "csv | json (JSON lines) | tensorboard (event files of every trial, with "
                "HParams; needs -o DIR)")("output,o", po::value<std::string>(),
                                          "write to this file instead of stdout (tensorboard: "
                                          "this new folder)")(
      "formula-guard",
      "csv (the default): put ' before text cells that start with =, +, -, @, a tab or a "
      "carriage return, so that a spreadsheet shows them as text instead of running them as "
      "formulas; numbers are written as they are")(
      "no-formula-guard",
      "csv: write text cells exactly as recorded (for programs that read the CSV back)");
  po::positional_options_description positional;
  positional.add("study-file", 1);
  po::variables_map vm;
  if (!parse_options(args,
                     "slurmtune export STUDY.h5 --table "
                     "trials|metrics|events|checkpoints|exploits|replay "
                     "--format csv|json [-o FILE]\n"
                     "       slurmtune export STUDY.h5 --format tensorboard -o DIR",
                     options, positional, vm))
    return kSuccess;
  const auto table = vm["table"].as<std::string>();
  const auto format_name = vm["format"].as<std::string>();
  if (format_name == "tensorboard") return export_tensorboard_logs(vm);
  if (format_name != "csv" && format_name != "json")
    throw po::error("--format must be csv, json or tensorboard, not '" + format_name + "'");
  if (table != "trials" && table != "metrics" && table != "events" && table != "checkpoints" &&
      table != "exploits" && table != "replay")
    throw po::error(
        "--table must be trials, metrics, events, checkpoints, exploits or replay, not '" + table +
        "'");
  DamagedFileGuard guard(vm["study-file"].as<std::string>());
  const store::StudyReader reader(vm["study-file"].as<std::string>());
  guard.opened();
  std::ofstream file;
  if (vm.count("output")) {
    file.open(vm["output"].as<std::string>());
    if (!file) throw InputError(vm["output"].as<std::string>() + ": cannot write");
  }
  std::ostream& out = vm.count("output") ? file : std::cout;
  const TableFormat format = format_name == "csv" ? TableFormat::Csv : TableFormat::JsonLines;
  // On by default: a CSV file is opened in a spreadsheet by whoever is given it, and its
  // text cells carry what trials wrote (their errors); programs opt out.
  if (vm.count("formula-guard") && vm.count("no-formula-guard"))
    throw po::error("--formula-guard and --no-formula-guard exclude each other");
  if (vm.count("formula-guard") && format != TableFormat::Csv)
    throw po::error("--formula-guard is for --format csv (JSON lines are read by programs)");
  const bool formula_guard = format == TableFormat::Csv && !vm.count("no-formula-guard");
  if (table == "replay") {
    write_replay_log(reader, out);
  } else if (table == "trials") {
    const auto& spec = reader.spec();
    const auto trials = reader.trials();
    const auto standings = store::trial_standings(reader, trials);
    const auto front = store::pareto_front(spec, trials, standings);
    TableWriter w(out, format, trial_columns(spec), formula_guard);
    for (const auto& t : trials) {
      auto cells = trial_cells(t);
      append_standing(cells, spec, standings[t.id],
                      std::find(front.begin(), front.end(), t.id) != front.end());
      w.row(cells);
    }
  } else if (table == "metrics") {
    TableWriter w(out, format, metric_columns(reader.spec()), formula_guard);
    reader.for_each_metric([&w](const store::MetricRecord& m) { w.row(metric_cells(m)); });
  } else if (table == "events") {
    TableWriter w(out, format, event_columns(), formula_guard);
    for (const auto& e : reader.events())
      w.row(event_cells(e));
  } else if (table == "exploits") {
    TableWriter w(out, format, exploit_columns(reader.spec()), formula_guard);
    for (const auto& x : reader.exploits())
      w.row(exploit_cells(x));
  } else {
    TableWriter w(out, format, checkpoint_columns(), formula_guard);
    for (const auto& c : reader.checkpoints())
      w.row(checkpoint_cells(c));
  }
  return kSuccess;
}

}  // namespace slurmtune::cli
