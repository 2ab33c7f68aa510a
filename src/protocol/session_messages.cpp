#include "protocol/session_messages.hpp"

#include "core/number_text.hpp"
#include "core/text.hpp"
#include "protocol/auth_messages.hpp"
#include "protocol/fields.hpp"

namespace slurmtune::protocol {
namespace {

// A token is 64 hex digits; a longer one is refused before it is compared.
constexpr std::size_t kMaxToken = 1024;
// Node names, job and step ids, metric names.
constexpr std::size_t kMaxName = 1024;
constexpr std::size_t kMaxPath = 4096;
// A hostlist ("n[1-4,7]") or a path the coordinator hands out.
constexpr std::size_t kMaxLong = 16384;

int count(const JsonObject& body, const char* name, const char* message, std::int64_t low) {
  return static_cast<int>(whole(body, name, message, low, kMaxCount));
}

std::string member(const char* name, const std::string& quoted_value) {
  return std::string(", \"") + name + "\": " + quoted_value;
}

// The fields of each kind of HELLO, after the credential (", \"name\": value" ...).
std::string hello_fields(const TrialHello& m) {
  std::string out = member("trial", std::to_string(m.trial)) +
                    member("attempt", std::to_string(m.attempt)) +
                    member("rank", std::to_string(m.rank));
  if (!m.slurm_step.empty()) out += member("slurm_step", core::json_quote(m.slurm_step));
  return out;
}

std::string hello_fields(const GroupHello& m) {
  return member("group", std::to_string(m.group)) + member("ranks", std::to_string(m.ranks)) +
         member("nodes", core::json_quote(m.nodes)) + member("step", std::to_string(m.step));
}

std::string hello_fields(const WorkerHello& m) {
  std::string out = member("worker", core::json_quote(m.node));
  if (!m.slurm_step.empty()) out += member("slurm_step", core::json_quote(m.slurm_step));
  return out;
}

std::string hello_fields(const JoinedHello& m) {
  std::string out = member("worker", core::json_quote(m.node)) +
                    member("allocation", core::json_quote(m.allocation)) +
                    member("cpus", std::to_string(m.cpus)) + member("gpus", std::to_string(m.gpus));
  if (m.time_left_s) out += member("time_left_s", core::format_double(*m.time_left_s));
  if (!m.slurm_step.empty()) out += member("slurm_step", core::json_quote(m.slurm_step));
  return out;
}

HelloFrom decode_worker_hello(const JsonObject& body) {
  const std::string node = required_text(body, "worker", "HELLO", kMaxName);
  const std::string slurm_step = optional_text(body, "slurm_step", "HELLO", kMaxName);
  if (!field(body, "allocation")) return WorkerHello{node, slurm_step};
  JoinedHello m;
  m.node = node;
  m.slurm_step = slurm_step;
  m.allocation = required_text(body, "allocation", "HELLO", kMaxName);
  m.cpus = whole(body, "cpus", "HELLO", 1, kMaxCount);
  m.gpus = whole(body, "gpus", "HELLO", 0, kMaxCount);
  if (field(body, "time_left_s")) m.time_left_s = finite(body, "time_left_s", "HELLO");
  return m;
}

HelloFrom decode_hello_from(const JsonObject& body) {
  if (field(body, "worker")) return decode_worker_hello(body);
  if (field(body, "group")) {
    GroupHello m;
    m.group = count(body, "group", "HELLO of a group", 0);
    m.ranks = count(body, "ranks", "HELLO of a group", 1);
    if (field(body, "step")) m.step = count(body, "step", "HELLO of a group", 0);
    m.nodes = optional_text(body, "nodes", "HELLO of a group", kMaxLong);
    return m;
  }
  TrialHello m;
  m.trial = static_cast<core::TrialId>(whole(body, "trial", "HELLO", 0, kMaxExactWhole));
  m.attempt = static_cast<std::uint64_t>(whole(body, "attempt", "HELLO", 0, kMaxExactWhole));
  if (field(body, "rank")) m.rank = whole(body, "rank", "HELLO", 0, kMaxCount);
  m.slurm_step = optional_text(body, "slurm_step", "HELLO", kMaxName);
  return m;
}

}  // namespace

JsonObject TrialAssignment::params_object() const {
  return std::get<JsonObject>(parse_json(params).data);
}

std::string encode(const Hello& m) {
  std::string out = m.challenge.empty() ? "{\"token\": " + core::json_quote(m.token)
                                        : "{\"challenge\": " + core::json_quote(m.challenge);
  out += std::visit([](const auto& from) { return hello_fields(from); }, m.from);
  return out + "}";
}

std::string encode(const TrialAssignment& m) {
  std::string out =
      "{\"trial\": " + std::to_string(m.trial) + member("attempt", std::to_string(m.attempt)) +
      member("params", m.params) + member("trial_dir", core::json_quote(m.trial_dir)) +
      (m.checkpoint_dir.empty() ? ""
                                : member("checkpoint_dir", core::json_quote(m.checkpoint_dir))) +
      member("checkpoint", m.checkpoint.empty() ? "null" : core::json_quote(m.checkpoint)) +
      member("checkpoint_step",
             m.checkpoint_step ? core::format_double(*m.checkpoint_step) : "null");
  if (!m.metric.empty()) out += member("metric", core::json_quote(m.metric));
  return out + "}";
}

std::string encode(const GroupWelcome& m) {
  return "{\"group\": " + std::to_string(m.group) + "}";
}

std::string encode(const WorkerWelcome& m) {
  std::string out = "{\"worker\": " + core::json_quote(m.node);
  if (!m.allocation.empty()) out += member("allocation", core::json_quote(m.allocation));
  if (!m.checkpoint_folder.empty())
    out += member("checkpoint_folder", core::json_quote(m.checkpoint_folder)) +
           member("study", core::json_quote(m.study));
  return out + "}";
}

std::string encode(const Assignment& m) {
  return std::visit([](const auto& message) { return encode(message); }, m);
}

std::string encode(const Next&) {
  return "{}";
}

std::string encode(const Ask&) {
  return "{}";
}

std::string encode(const Heartbeat&) {
  return "{}";
}

Hello decode_hello(const JsonObject& body) {
  Hello m;
  if (field(body, "challenge"))
    m.challenge = nonce_field(body, "challenge", "HELLO");
  else
    m.token = optional_text(body, "token", "HELLO", kMaxToken);  // "": refused as missing
  m.from = decode_hello_from(body);
  return m;
}

TrialAssignment decode_trial_assignment(const JsonObject& body, const char* message) {
  TrialAssignment m;
  m.trial = static_cast<core::TrialId>(whole(body, "trial", message, 0, kMaxExactWhole));
  m.attempt = static_cast<std::uint64_t>(whole(body, "attempt", message, 0, kMaxExactWhole));
  const auto* params = field(body, "params");
  if (!params || !params->is_object())
    throw ProtocolError(where(message, "params") + " must be an object");
  m.params = to_json_text(*params);
  m.trial_dir = required_text(body, "trial_dir", message, kMaxLong);
  m.checkpoint_dir = optional_text(body, "checkpoint_dir", message, kMaxLong);
  m.checkpoint = optional_text(body, "checkpoint", message, kMaxLong, true);
  if (const auto* step = field(body, "checkpoint_step");
      step && !std::holds_alternative<std::nullptr_t>(step->data))
    m.checkpoint_step = finite(body, "checkpoint_step", message);
  m.metric = optional_text(body, "metric", message, kMaxName);
  return m;
}

GroupWelcome decode_group_welcome(const JsonObject& body) {
  return GroupWelcome{count(body, "group", "WELCOME", 0)};
}

WorkerWelcome decode_worker_welcome(const JsonObject& body) {
  WorkerWelcome m{required_text(body, "worker", "WELCOME", kMaxName),
                  optional_text(body, "allocation", "WELCOME", kMaxName)};
  if (field(body, "checkpoint_folder")) {
    m.checkpoint_folder = path_text(body, "checkpoint_folder", "WELCOME", kMaxPath);
    if (m.checkpoint_folder.front() != '/')
      throw ProtocolError("WELCOME: 'checkpoint_folder' must be an absolute path");
    m.study = path_text(body, "study", "WELCOME", kMaxPath);
  }
  return m;
}

Assignment decode_assign(const JsonObject& body) {
  if (boolean(body, "done", "ASSIGN", false)) return StudyOver{};
  return decode_trial_assignment(body, "ASSIGN");
}

Next decode_next(const JsonObject&) {
  return {};
}

Ask decode_ask(const JsonObject&) {
  return {};
}

Heartbeat decode_heartbeat(const JsonObject&) {
  return {};
}

}  // namespace slurmtune::protocol
