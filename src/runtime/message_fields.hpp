#pragma once
// Typed access to the fields of a control-plane message (a JSON object), shared by the
// coordinator's handlers for trials and for trial groups.
#include <string>
#include <string_view>

#include "core/json.hpp"
#include "runtime/protocol.hpp"

namespace slurmtune::runtime {

/// The field, or nullptr when the message lacks it.
inline const core::JsonValue* field(const core::JsonObject& body, std::string_view name) {
  const auto it = body.find(name);
  return it == body.end() ? nullptr : &it->second;
}

/// A numeric field; ProtocolError "MESSAGE: 'name' must be a number" otherwise.
inline double number(const core::JsonObject& body, std::string_view name,
                     std::string_view message) {
  const auto* v = field(body, name);
  if (!v || !v->is_number())
    throw ProtocolError(std::string(message) + ": '" + std::string(name) + "' must be a number");
  return std::get<double>(v->data);
}

/// A string field, or "" when it is absent or not a string.
inline std::string text(const core::JsonObject& body, std::string_view name) {
  const auto* v = field(body, name);
  return v && v->is_string() ? std::get<std::string>(v->data) : std::string();
}

}  // namespace slurmtune::runtime
