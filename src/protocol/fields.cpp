#include "protocol/fields.hpp"

namespace slurmtune::protocol {

std::string path_text(const JsonObject& body, std::string_view name, std::string_view message,
                      std::size_t max_bytes) {
  std::string path = required_text(body, name, message, max_bytes);
  if (path.find('\0') != std::string::npos)
    throw ProtocolError(where(message, name) + " holds a NUL byte; a path cannot");
  if (path.find("\xEF\xBF\xBD") != std::string::npos)
    throw ProtocolError(where(message, name) +
                        " holds U+FFFD (a lone surrogate escape reads so): name the file with "
                        "a path that is valid UTF-8");
  return path;
}

std::string required_text(const JsonObject& body, std::string_view name, std::string_view message,
                          std::size_t max_bytes, bool may_be_empty) {
  const auto* v = field(body, name);
  if (!v || !v->is_string()) throw ProtocolError(where(message, name) + " must be a string");
  const auto& s = std::get<std::string>(v->data);
  if (s.empty() && !may_be_empty) throw ProtocolError(where(message, name) + " must not be empty");
  if (s.size() > max_bytes)
    throw ProtocolError(where(message, name) + " has " + std::to_string(s.size()) +
                        " bytes, at most " + std::to_string(max_bytes) + " are allowed");
  return s;
}

std::string optional_text(const JsonObject& body, std::string_view name, std::string_view message,
                          std::size_t max_bytes, bool null_is_absent) {
  const auto* v = field(body, name);
  if (!v || (null_is_absent && std::holds_alternative<std::nullptr_t>(v->data))) return {};
  return required_text(body, name, message, max_bytes, true);
}

bool boolean(const JsonObject& body, std::string_view name, std::string_view message,
             bool fallback) {
  const auto* v = field(body, name);
  if (!v) return fallback;
  if (!std::holds_alternative<bool>(v->data))
    throw ProtocolError(where(message, name) + " must be true or false");
  return std::get<bool>(v->data);
}

std::vector<std::string> strings(const JsonObject& body, std::string_view name,
                                 std::string_view message) {
  const auto* v = field(body, name);
  if (!v) return {};
  if (!std::holds_alternative<JsonArray>(v->data))
    throw ProtocolError(where(message, name) + " must be an array of strings");
  std::vector<std::string> out;
  for (const auto& item : std::get<JsonArray>(v->data)) {
    if (!item.is_string())
      throw ProtocolError(where(message, name) + " item " + std::to_string(out.size()) +
                          " must be a string");
    out.push_back(std::get<std::string>(item.data));
  }
  return out;
}

std::map<std::string, std::string> string_map(const JsonObject& body, std::string_view name,
                                              std::string_view message) {
  const auto* v = field(body, name);
  if (!v || !v->is_object()) throw ProtocolError(where(message, name) + " must be an object");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : std::get<JsonObject>(v->data)) {
    if (!value.is_string())
      throw ProtocolError(where(message, name) + " entry '" + key + "' must be a string");
    out.emplace(key, std::get<std::string>(value.data));
  }
  return out;
}

}  // namespace slurmtune::protocol
