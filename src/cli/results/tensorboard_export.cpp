#include "cli/results/tensorboard_export.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>
#include <variant>

#include "cli/results/tensorboard_events.hpp"
#include "core/error.hpp"
#include "runtime/this_process.hpp"
#include "store/objective_values.hpp"

namespace slurmtune::cli {
namespace fs = std::filesystem;
namespace {

// HParams enums (tensorboard/plugins/hparams/api.proto).
enum DataType : std::uint64_t { kString = 1, kBool = 2, kFloat64 = 3 };
enum SessionStatus : std::uint64_t { kSuccess = 1, kFailure = 2, kRunning = 3 };

// google.protobuf.Value { number_value = 2, string_value = 3, bool_value = 4 }
ProtoWriter proto_value(const core::ParamValue& value) {
  ProtoWriter out;
  if (const auto* b = std::get_if<bool>(&value)) return out.varint(4, *b ? 1 : 0);
  if (const auto* i = std::get_if<std::int64_t>(&value))
    return out.fixed64(2, static_cast<double>(*i));
  if (const auto* d = std::get_if<double>(&value)) return out.fixed64(2, *d);
  return out.bytes(3, std::get<std::string>(value));
}

DataType data_type(const core::Domain& domain) {
  if (!domain.values.empty()) {
    bool strings = true, bools = true;
    for (const auto& v : domain.values) {
      strings = strings && std::holds_alternative<std::string>(v);
      bools = bools && std::holds_alternative<bool>(v);
    }
    if (strings) return kString;
    if (bools) return kBool;
  }
  return kFloat64;
}

// HParamInfo { name = 1, type = 4, domain_discrete = 5 (ListValue), domain_interval = 6 }
ProtoWriter hparam_info(const core::Parameter& parameter) {
  ProtoWriter info;
  info.bytes(1, parameter.name).varint(4, data_type(parameter.domain));
  const auto& domain = parameter.domain;
  if (!domain.values.empty()) {
    ProtoWriter list;  // ListValue { values = 1 }
    for (const auto& v : domain.values)
      list.message(1, proto_value(v));
    info.message(5, list);
  } else {
    ProtoWriter interval;
    interval.fixed64(1, domain.low).fixed64(2, domain.high);
    info.message(6, interval);
  }
  return info;
}

// HParamsPluginData { version = 1 (0), experiment = 2 } with
// Experiment { name = 6, description = 1, time_created_secs = 3, hparam_infos = 4,
// metric_infos = 5 }; MetricInfo { name = 1 (MetricName { group = 1, tag = 2 }) }.
// Several objectives or constraints: each trial's standing as two boolean hparams, so
// that TensorBoard's table can filter the front and the infeasible trials.
struct Standing {
  bool pareto = false, feasible = true;
};
constexpr const char* kParetoHparam = "slurmtune/pareto";
constexpr const char* kFeasibleHparam = "slurmtune/feasible";

bool has_standing(const core::StudySpec& spec) {
  return spec.multi_objective() || !spec.constraints.empty();
}

ProtoWriter bool_hparam_info(const char* name) {
  ProtoWriter info, list;
  list.message(1, proto_value(false)).message(1, proto_value(true));
  info.bytes(1, name).varint(4, kBool).message(5, list);
  return info;
}

ProtoWriter experiment(const store::StudyReader& reader, double created) {
  ProtoWriter out;
  out.bytes(6, reader.spec().name)
      .bytes(1, "slurmtune study " + reader.spec().name + " (" + reader.path() + ")")
      .fixed64(3, created);
  for (const auto& parameter : reader.spec().space.parameters())
    out.message(4, hparam_info(parameter));
  if (has_standing(reader.spec()))
    out.message(4, bool_hparam_info(kParetoHparam)).message(4, bool_hparam_info(kFeasibleHparam));
  for (const auto& metric : reader.spec().metrics) {
    ProtoWriter name, info;
    name.bytes(2, metric);
    info.message(1, name);
    out.message(5, info);
  }
  ProtoWriter data;
  data.message(2, out);
  return data;
}

// SessionStartInfo { hparams = 1 (map entries { key = 1, value = 2 }), group_name = 4,
// start_time_secs = 5 }, as HParamsPluginData.session_start_info = 3.
ProtoWriter session_start(const store::StudyReader& reader, const store::TrialRecord& trial,
                          const std::optional<Standing>& standing) {
  ProtoWriter start;
  if (standing) {
    for (const auto& [name, value] : {std::pair{kParetoHparam, standing->pareto},
                                      std::pair{kFeasibleHparam, standing->feasible}}) {
      ProtoWriter entry;
      entry.bytes(1, name).message(2, proto_value(value));
      start.message(1, entry);
    }
  }
  const auto& parameters = reader.spec().space.parameters();
  for (std::size_t i = 0; i < parameters.size() && i < trial.config.values.size(); ++i) {
    if (!trial.config.is_active(i)) continue;  // absent, as TensorBoard shows a missing hparam
    ProtoWriter entry;
    entry.bytes(1, parameters[i].name).message(2, proto_value(trial.config.values[i]));
    start.message(1, entry);
  }
  start.fixed64(5, trial.start_time);
  ProtoWriter data;
  data.message(3, start);
  return data;
}

// SessionEndInfo { status = 1, end_time_secs = 2 }, as session_end_info = 4. A trial
// stopped early by the scheduler ran as it should: success.
std::optional<ProtoWriter> session_end(const store::TrialRecord& trial) {
  std::uint64_t status = kSuccess;
  switch (trial.status) {
    case store::TrialStatus::Failed:
      status = kFailure;
      break;
    case store::TrialStatus::Pending:
    case store::TrialStatus::Running:
      return std::nullopt;  // no end yet: TensorBoard shows it as running
    default:
      break;
  }
  ProtoWriter end;
  end.varint(1, status).fixed64(2, trial.end_time);
  ProtoWriter data;
  data.message(4, end);
  return data;
}

// One event file, written whole.
void write_file(const fs::path& path, const std::string& records) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(records.data(), static_cast<std::streamsize>(records.size()));
  if (!out.flush()) throw Error("cannot write " + path.string());
}

// Bytes one scalar record takes, about (TFRecord framing, Event, Summary, the tag):
// batches of runs are sized with it so that their buffers stay within kBatchBytes.
constexpr std::uint64_t kScalarBytes = 64;
constexpr std::uint64_t kBatchBytes = 256u << 20;

void check_empty(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
    throw InputError(dir +
                     ": exists and is not an empty folder; name a new one (nothing is "
                     "overwritten)");
}

}  // namespace

// Each run's file is written once: runs are taken in batches whose records fit in
// kBatchBytes, and the metrics are read once per batch (once, for most studies).
TensorboardExport export_tensorboard(const store::StudyReader& reader, const std::string& dir) {
  check_empty(dir);
  fs::create_directories(dir);
  const auto trials = reader.trials();
  const auto sessions = reader.sessions();
  const double created = sessions.empty() ? 0.0 : sessions.front().started;
  // TensorBoard reads files named events.out.tfevents.*; the time and host tell them apart.
  const std::string file_name = "events.out.tfevents." +
                                std::to_string(static_cast<std::int64_t>(created)) + "." +
                                runtime::host_name() + ".slurmtune";
  write_file(fs::path(dir) / file_name, tfrecord(file_version_event(created)) +
                                            tfrecord(hparams_event(created, "_hparams_/experiment",
                                                                   experiment(reader, created))));
  std::vector<std::optional<Standing>> standing(trials.size());
  if (has_standing(reader.spec())) {
    const auto standings = store::trial_standings(reader, trials);
    for (std::size_t t = 0; t < trials.size(); ++t)
      standing[t] = Standing{false, standings[t].feasible};
    for (const auto id : store::pareto_front(reader.spec(), trials, standings))
      if (id < standing.size() && reader.spec().multi_objective()) standing[id]->pareto = true;
  }
  const auto& metrics = reader.spec().metrics;
  std::vector<std::uint64_t> scalars(trials.size(), 0);
  reader.for_each_metric([&](const store::MetricRecord& m) {
    if (m.trial >= trials.size()) return;
    for (std::size_t i = 0; i < metrics.size() && i < m.values.size(); ++i)
      scalars[m.trial] += std::isnan(m.values[i]) ? 0 : 1;
  });
  TensorboardExport result;
  for (std::size_t first = 0; first < trials.size();) {
    std::size_t last = first;
    for (std::uint64_t bytes = 0; last < trials.size() && (last == first || bytes < kBatchBytes);
         ++last)
      bytes += (scalars[last] + 3) * kScalarBytes;
    std::vector<std::string> runs(last - first);
    for (std::size_t t = first; t < last; ++t)
      runs[t - first] = tfrecord(file_version_event(trials[t].start_time)) +
                        tfrecord(hparams_event(trials[t].start_time, "_hparams_/session_start_info",
                                               session_start(reader, trials[t], standing[t])));
    reader.for_each_metric([&](const store::MetricRecord& m) {
      if (m.trial < first || m.trial >= last) return;
      for (std::size_t i = 0; i < metrics.size() && i < m.values.size(); ++i) {
        if (std::isnan(m.values[i])) continue;
        // TensorBoard's steps are integers: the study's resource, rounded.
        runs[m.trial - first] += tfrecord(scalar_event(m.time, std::llround(m.step), metrics[i],
                                                       static_cast<float>(m.values[i])));
        ++result.scalars;
      }
    });
    for (std::size_t t = first; t < last; ++t) {
      if (const auto end = session_end(trials[t]))
        runs[t - first] +=
            tfrecord(hparams_event(trials[t].end_time, "_hparams_/session_end_info", *end));
      const fs::path run = fs::path(dir) / ("trial-" + std::to_string(trials[t].id));
      fs::create_directory(run);
      write_file(run / file_name, runs[t - first]);
      std::string().swap(runs[t - first]);
    }
    result.runs += last - first;
    first = last;
  }
  return result;
}

}  // namespace slurmtune::cli
