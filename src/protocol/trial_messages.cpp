#include "protocol/trial_messages.hpp"

#include <cmath>

#include "core/number_text.hpp"
#include "core/space/param_value.hpp"
#include "core/text.hpp"
#include "protocol/fields.hpp"

namespace slurmtune::protocol {
namespace {

// The error of a failed trial: its stderr's last lines fit; the frame bounds it anyway.
constexpr std::size_t kMaxError = 32768;
// A checkpoint's path as the trial names it (absolute or relative; resolved and bounded
// by the coordinator against the results file's limit).
constexpr std::size_t kMaxPath = 16384;

// Values are equal, or both NaN: a report of a diverged loss is the same report again.
bool same(const std::optional<double>& x, const std::optional<double>& y) {
  if (!x || !y) return !x && !y;
  return *x == *y || (std::isnan(*x) && std::isnan(*y));
}

}  // namespace

std::string encode(const TrialEnding& m) {
  return std::string("{\"status\": \"") + (m.completed ? "completed" : "failed") +
         "\", \"error\": " + core::json_quote(m.error) + "}";
}

bool operator==(const DecisionReply& a, const DecisionReply& b) {
  return a.decision == b.decision && a.instruction == b.instruction &&
         a.checkpoint == b.checkpoint && a.rung == b.rung && same(a.cutoff, b.cutoff) &&
         a.exploit == b.exploit && a.duplicate == b.duplicate;
}

bool operator==(const Report& a, const Report& b) {
  if (a.step != b.step || a.metrics.size() != b.metrics.size()) return false;
  for (std::size_t i = 0; i < a.metrics.size(); ++i)
    if (a.metrics[i].first != b.metrics[i].first || !same(a.metrics[i].second, b.metrics[i].second))
      return false;
  return true;
}

std::string encode(const Report& m) {
  std::string out = "{\"step\": " + core::format_double(m.step) + ", \"metrics\": {";
  bool first = true;
  for (const auto& [name, value] : m.metrics) {
    out += (first ? "" : ", ") + core::json_quote(name) + ": " +
           (value ? core::to_json(*value) : std::string("null"));
    first = false;
  }
  return out + "}}";
}

std::string encode(const CheckpointSaved& m) {
  return "{\"step\": " + core::format_double(m.step) + ", \"path\": " + core::json_quote(m.path) +
         ", \"size\": " + std::to_string(m.size) + "}";
}

std::string encode(const DecisionReply& m) {
  std::string out = "{\"decision\": " + core::json_quote(m.decision) +
                    ", \"instruction\": " + core::json_quote(m.instruction) +
                    ", \"checkpoint\": " + (m.checkpoint ? "true" : "false");
  if (m.exploit)
    out += ", \"exploit\": {\"donor\": " + std::to_string(m.exploit->donor) +
           ", \"donor_step\": " + core::format_double(m.exploit->donor_step) + "}";
  if (m.rung) out += ", \"rung\": " + std::to_string(*m.rung);
  if (m.cutoff) out += ", \"cutoff\": " + core::format_double(*m.cutoff);
  if (m.duplicate) out += ", \"duplicate\": true";
  return out + "}";
}

DecisionReply decode_decision(const JsonObject& body) {
  DecisionReply m;
  m.decision = required_text(body, "decision", "DECISION", 16);
  if (m.decision != "continue" && m.decision != "stop" && m.decision != "pause")
    throw ProtocolError("DECISION: 'decision' must be \"continue\", \"stop\" or \"pause\", not \"" +
                        core::visible(m.decision) + "\"");
  m.instruction = optional_text(body, "instruction", "DECISION", 32);
  m.checkpoint = boolean(body, "checkpoint", "DECISION", false);
  if (field(body, "rung")) m.rung = static_cast<int>(whole(body, "rung", "DECISION", 0, kMaxCount));
  if (field(body, "cutoff")) m.cutoff = number(body, "cutoff", "DECISION");
  if (const auto* exploit = field(body, "exploit")) {
    if (!exploit->is_object()) throw ProtocolError("DECISION: 'exploit' must be an object");
    const auto& e = std::get<JsonObject>(exploit->data);
    m.exploit = DecisionReply::Exploit{
        static_cast<std::uint64_t>(whole(e, "donor", "DECISION exploit", 0, kMaxExactWhole)),
        finite(e, "donor_step", "DECISION exploit")};
  }
  m.duplicate = boolean(body, "duplicate", "DECISION", false);
  return m;
}

Report decode_report(const JsonObject& body) {
  Report m;
  m.step = step(body, "step", "REPORT");
  const auto* metrics = field(body, "metrics");
  if (!metrics || !metrics->is_object())
    throw ProtocolError("REPORT: 'metrics' must be an object of numbers");
  for (const auto& [name, value] : std::get<JsonObject>(metrics->data)) {
    if (!value.is_number() && !std::holds_alternative<std::nullptr_t>(value.data))
      throw ProtocolError("REPORT: metric '" + core::visible(name) + "' is a " +
                          std::string(value.type_name()) + ", not a number");
    m.metrics.emplace_back(name, value.is_number()
                                     ? std::optional<double>(std::get<double>(value.data))
                                     : std::nullopt);
  }
  return m;
}

CheckpointSaved decode_checkpoint(const JsonObject& body) {
  CheckpointSaved m;
  m.step = step(body, "step", "CHECKPOINT");
  m.path = path_text(body, "path", "CHECKPOINT", kMaxPath);
  if (field(body, "size"))
    m.size = static_cast<std::uint64_t>(whole(body, "size", "CHECKPOINT", 0, kMaxExactWhole));
  return m;
}

TrialEnding decode_trial_ending(const JsonObject& body, const char* message) {
  const std::string status = required_text(body, "status", message, 16);
  if (status != "completed" && status != "failed")
    throw ProtocolError(std::string(message) +
                        ": 'status' must be \"completed\" or \"failed\", not \"" +
                        core::visible(status) + "\"");
  TrialEnding m;
  m.completed = status == "completed";
  m.error = optional_text(body, "error", message, kMaxError);
  return m;
}

}  // namespace slurmtune::protocol
