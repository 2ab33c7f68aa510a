#include "protocol/worker_messages.hpp"

#include <charconv>
#include <filesystem>
#include <system_error>

#include "core/number_text.hpp"
#include "core/text.hpp"
#include "protocol/fields.hpp"

namespace slurmtune::protocol {
namespace {

constexpr std::size_t kMaxKey = 64;
constexpr std::size_t kMaxPath = 4096;
constexpr std::size_t kMaxWhy = 1024;

std::string quoted_strings(const std::vector<std::string>& values) {
  std::string out = "[";
  for (const auto& v : values) {
    if (out.size() > 1) out += ", ";
    out += core::json_quote(v);
  }
  return out + "]";
}

std::string quoted_map(const std::map<std::string, std::string>& values) {
  std::string out = "{";
  for (const auto& [name, value] : values) {
    if (out.size() > 1) out += ", ";
    out += core::json_quote(name) + ": " + core::json_quote(value);
  }
  return out + "}";
}

ProcessKey key_of(const JsonObject& body, const char* message) {
  return ProcessKey::parse(required_text(body, "key", message, kMaxKey), message);
}

// A path the worker acts on as given: absolute and already normal, so no "." or ".."
// (nor a doubled or trailing "/") hides where it points.
void require_normal_absolute(const std::string& path, const std::string& what) {
  const std::filesystem::path p(path);
  if (!p.is_absolute() || p.lexically_normal().string() != path || path.back() == '/')
    throw ProtocolError(what + " '" + core::visible(path) +
                        "' must be an absolute path without '.', '..', '//' or a trailing '/'");
}

}  // namespace

std::string ProcessKey::text() const {
  return std::to_string(trial) + "." + std::to_string(attempt);
}

ProcessKey ProcessKey::parse(const std::string& text, const char* message) {
  ProcessKey key;
  const char* begin = text.data();
  const char* end = begin + text.size();
  const auto dot = text.find('.');
  const auto whole = [](const char* from, const char* to, std::uint64_t& out) {
    const auto [ptr, error] = std::from_chars(from, to, out);
    return error == std::errc() && ptr == to;
  };
  const bool ok = dot != std::string::npos && dot > 0 && dot + 1 < text.size() &&
                  whole(begin, begin + dot, key.trial) && whole(begin + dot + 1, end, key.attempt);
  if (!ok)
    throw ProtocolError(std::string(message) + ": 'key' must be TRIAL.ATTEMPT, not '" +
                        core::visible(text) + "'");
  return key;
}

std::string encode(const Launch& m) {
  return "{\"key\": " + core::json_quote(m.key.text()) + ", \"argv\": " + quoted_strings(m.argv) +
         ", \"env\": " + quoted_map(m.env) + ", \"stdout\": " + core::json_quote(m.stdout_path) +
         ", \"stderr\": " + core::json_quote(m.stderr_path) +
         ", \"gpus\": " + quoted_strings(m.gpus) +
         (m.checkpoint_dir.empty()
              ? std::string()
              : ", \"checkpoint_dir\": " + core::json_quote(m.checkpoint_dir)) +
         ", \"launch\": " + std::to_string(m.launch) + "}";
}

std::string encode(const StudyOver&) {
  return "{\"done\": true}";
}

std::string encode(const LaunchOrDone& m) {
  return std::visit([](const auto& message) { return encode(message); }, m);
}

std::string encode(const Exited& m) {
  std::string out = "{\"key\": " + core::json_quote(m.key.text()) +
                    ", \"code\": " + std::to_string(m.code) +
                    ", \"signal\": " + std::to_string(m.signal) +
                    ", \"signaled\": " + (m.signaled ? "true" : "false");
  if (!m.error.empty()) out += ", \"error\": " + core::json_quote(m.error);
  return out + "}";
}

std::string encode(const Signal& m) {
  return "{\"key\": " + core::json_quote(m.key.text()) +
         ", \"signal\": " + std::to_string(m.signal) + "}";
}

std::string encode(const Leaving& m) {
  return "{\"why\": " + core::json_quote(m.why) + "}";
}

std::string encode(const Admit& m) {
  return "{\"key\": " + core::json_quote(m.key.text()) +
         ", \"admit\": " + (m.admit ? "true" : "false") + "}";
}

std::string encode(const Remove& m) {
  return "{\"trial\": " + std::to_string(m.trial) + ", \"paths\": " + quoted_strings(m.paths) + "}";
}

std::string encode(const CopyCheckpoint& m) {
  std::string out = "{\"id\": " + std::to_string(m.id) + ", \"trial\": " + std::to_string(m.trial) +
                    ", \"step\": " + core::format_double(m.step);
  if (m.donor) out += ", \"donor\": " + std::to_string(*m.donor);
  if (m.clone != CopyCheckpoint::Clone::Here)
    out += std::string(", \"stage\": ") +
           (m.clone == CopyCheckpoint::Clone::Stage ? "\"to\"" : "\"from\"");
  if (!m.source.empty()) out += ", \"source\": " + core::json_quote(m.source);
  if (m.if_missing) out += ", \"if_missing\": true";
  return out + "}";
}

std::string encode(const CheckpointCopied& m) {
  std::string out = "{\"id\": " + std::to_string(m.id);
  if (!m.error.empty()) return out + ", \"error\": " + core::json_quote(m.error) + "}";
  return out + ", \"path\": " + core::json_quote(m.path) +
         ", \"bytes\": " + std::to_string(m.bytes) + ", \"how\": " + core::json_quote(m.how) + "}";
}

LaunchOrDone decode_launch(const JsonObject& body) {
  if (boolean(body, "done", "LAUNCH", false)) return StudyOver{};
  Launch m;
  m.key = key_of(body, "LAUNCH");
  m.argv = strings(body, "argv", "LAUNCH");
  if (m.argv.empty()) throw ProtocolError("LAUNCH: 'argv' must name a program");
  m.env = string_map(body, "env", "LAUNCH");
  for (const auto& [name, value] : m.env)
    if (name.empty() || name.find('=') != std::string::npos)
      throw ProtocolError("LAUNCH: 'env' has the name '" + core::visible(name) +
                          "', not a variable name");
  m.stdout_path = required_text(body, "stdout", "LAUNCH", kMaxPath);
  m.stderr_path = required_text(body, "stderr", "LAUNCH", kMaxPath);
  m.checkpoint_dir = optional_text(body, "checkpoint_dir", "LAUNCH", kMaxPath);
  if (!m.checkpoint_dir.empty())
    require_normal_absolute(path_text(body, "checkpoint_dir", "LAUNCH", kMaxPath),
                            "LAUNCH: 'checkpoint_dir'");
  m.gpus = strings(body, "gpus", "LAUNCH");
  for (const auto& g : m.gpus)
    if (g.empty() || g.size() > 8 || g.find_first_not_of("0123456789") != std::string::npos)
      throw ProtocolError("LAUNCH: 'gpus' has '" + core::visible(g) + "', not a device position");
  m.launch = static_cast<std::uint64_t>(whole(body, "launch", "LAUNCH", 1, kMaxExactWhole));
  return m;
}

Exited decode_exited(const JsonObject& body) {
  Exited m;
  m.key = key_of(body, "EXITED");
  m.code = static_cast<int>(whole(body, "code", "EXITED", -1, 255));
  m.signal = static_cast<int>(whole(body, "signal", "EXITED", 0, 128));
  m.signaled = boolean(body, "signaled", "EXITED", false);
  m.error = optional_text(body, "error", "EXITED", 16384);
  return m;
}

Signal decode_signal(const JsonObject& body) {
  Signal m;
  m.key = key_of(body, "SIGNAL");
  m.signal = static_cast<int>(whole(body, "signal", "SIGNAL", 1, 64));
  return m;
}

Leaving decode_leaving(const JsonObject& body) {
  return Leaving{required_text(body, "why", "LEAVING", kMaxWhy, true)};
}

Admit decode_admit(const JsonObject& body) {
  Admit m;
  m.key = key_of(body, "ADMIT");
  if (!field(body, "admit")) throw ProtocolError("ADMIT: 'admit' must be true or false");
  m.admit = boolean(body, "admit", "ADMIT", true);
  return m;
}

Remove decode_remove(const JsonObject& body) {
  Remove m;
  m.trial = static_cast<core::TrialId>(whole(body, "trial", "REMOVE", 0, INT64_MAX));
  m.paths = strings(body, "paths", "REMOVE");
  if (m.paths.empty() || m.paths.size() > Remove::kMaxRemovePaths)
    throw ProtocolError("REMOVE: 'paths' must hold 1 to " +
                        std::to_string(Remove::kMaxRemovePaths) + " paths, not " +
                        std::to_string(m.paths.size()));
  for (const auto& path : m.paths) {
    if (path.empty() || path.size() > kMaxPath || path.find('\0') != std::string::npos)
      throw ProtocolError("REMOVE: 'paths' has an empty path, one over " +
                          std::to_string(kMaxPath) + " bytes, or one with a NUL byte");
    require_normal_absolute(path, "REMOVE: 'paths' has");
  }
  return m;
}

CopyCheckpoint decode_copy_checkpoint(const JsonObject& body) {
  CopyCheckpoint m;
  m.id = static_cast<std::uint64_t>(whole(body, "id", "COPY", 0, kMaxExactWhole));
  m.trial = static_cast<core::TrialId>(whole(body, "trial", "COPY", 0, kMaxExactWhole));
  m.step = step(body, "step", "COPY");
  if (field(body, "donor"))
    m.donor = static_cast<core::TrialId>(whole(body, "donor", "COPY", 0, kMaxExactWhole));
  m.source = optional_text(body, "source", "COPY", kMaxPath);
  if (m.donor.has_value() == !m.source.empty())
    throw ProtocolError("COPY: needs either 'source' (a keep) or 'donor' (a clone)");
  if (const std::string stage = optional_text(body, "stage", "COPY", 8); !stage.empty()) {
    if (stage != "to" && stage != "from")
      throw ProtocolError("COPY: 'stage' must be \"to\" or \"from\", not '" + core::visible(stage) +
                          "'");
    if (!m.donor) throw ProtocolError("COPY: 'stage' goes with 'donor' (a clone)");
    m.clone = stage == "to" ? CopyCheckpoint::Clone::Stage : CopyCheckpoint::Clone::Staged;
  }
  m.if_missing = boolean(body, "if_missing", "COPY", false);
  if (m.if_missing && m.donor)
    throw ProtocolError("COPY: 'if_missing' goes with 'source' (a keep)");
  if (!m.source.empty())
    require_normal_absolute(path_text(body, "source", "COPY", kMaxPath), "COPY: 'source'");
  return m;
}

CheckpointCopied decode_checkpoint_copied(const JsonObject& body) {
  CheckpointCopied m;
  m.id = static_cast<std::uint64_t>(whole(body, "id", "COPIED", 0, kMaxExactWhole));
  m.error = optional_text(body, "error", "COPIED", 16384);
  if (!m.error.empty()) return m;
  m.path = path_text(body, "path", "COPIED", kMaxPath);
  require_normal_absolute(m.path, "COPIED: 'path'");
  m.bytes = static_cast<std::uint64_t>(whole(body, "bytes", "COPIED", 0, kMaxExactWhole));
  m.how = optional_text(body, "how", "COPIED", kMaxWhy);
  return m;
}

}  // namespace slurmtune::protocol
