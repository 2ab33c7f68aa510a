#pragma once
// Checked reads of the fields of a control-plane message (a JSON object): each names
// the message and the field when the field is missing, of another type or out of range
// (ProtocolError). Private to src/protocol: the typed messages
// (protocol/*_messages.hpp) decode with them, and nothing else reads a field by name.
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/number_text.hpp"
#include "core/steps.hpp"
#include "protocol/wire/json_value.hpp"
#include "protocol/wire/protocol.hpp"

namespace slurmtune::protocol {

/// "MESSAGE: 'name'", the start of every refusal of a field.
inline std::string where(std::string_view message, std::string_view name) {
  return std::string(message) + ": '" + std::string(name) + "'";
}

/// The field, or nullptr when the message lacks it.
inline const JsonValue* field(const JsonObject& body, std::string_view name) {
  const auto it = body.find(name);
  return it == body.end() ? nullptr : &it->value;
}

/// A numeric field; ProtocolError "MESSAGE: 'name' must be a number" otherwise.
inline double number(const JsonObject& body, std::string_view name, std::string_view message) {
  const auto* v = field(body, name);
  if (!v || !v->is_number()) throw ProtocolError(where(message, name) + " must be a number");
  return std::get<double>(v->data);
}

/// A finite numeric field (not NaN or ±Infinity); ProtocolError naming it otherwise.
inline double finite(const JsonObject& body, std::string_view name, std::string_view message) {
  const double v = number(body, name, message);
  if (!std::isfinite(v))
    throw ProtocolError(where(message, name) + " must be a finite number, not " +
                        core::format_double(v));
  return v;
}

/// A step (core/steps.hpp: from 0 to 2^53); ProtocolError naming the field otherwise.
inline double step(const JsonObject& body, std::string_view name, std::string_view message) {
  const double v = number(body, name, message);
  if (!core::valid_step(v))
    throw ProtocolError(where(message, name) + " " + core::step_range_refusal(v));
  return v;
}

/// A whole number in [low, high]; ProtocolError naming the field otherwise. Checked
/// before any cast: a double outside the integer's range has no defined conversion.
inline std::int64_t whole(const JsonObject& body, std::string_view name, std::string_view message,
                          std::int64_t low, std::int64_t high) {
  const double v = number(body, name, message);
  if (!(v >= static_cast<double>(low) && v <= static_cast<double>(high)) || v != std::floor(v))
    throw ProtocolError(where(message, name) + " must be a whole number from " +
                        std::to_string(low) + " to " + std::to_string(high) + ", not " +
                        core::format_double(v));
  return static_cast<std::int64_t>(v);
}

/// Largest whole number a message carries exactly (2^53: JSON numbers are doubles).
inline constexpr std::int64_t kMaxExactWhole = std::int64_t{1} << 53;
/// Bound of counts of ranks, groups, steps, CPUs and GPUs in a message.
inline constexpr std::int64_t kMaxCount = std::int64_t{1} << 24;

/// A string field, or "" when it is absent or not a string.
inline std::string text(const JsonObject& body, std::string_view name) {
  const auto* v = field(body, name);
  return v && v->is_string() ? std::get<std::string>(v->data) : std::string();
}

/// A string field that must be there: ProtocolError naming it when it is missing, not
/// a string, empty (unless `may_be_empty`) or longer than `max_bytes`.
std::string required_text(const JsonObject& body, std::string_view name, std::string_view message,
                          std::size_t max_bytes, bool may_be_empty = false);
/// A path (as required_text) that names one file as the sender meant it: no NUL byte,
/// which cut the path short where it was used (`ck\u0000../../etc` was indexed as
/// `etc`), and no U+FFFD, which is what a lone surrogate escape reads as (Python writes
/// one for each byte of a file name that is not UTF-8): the file read would be another.
std::string path_text(const JsonObject& body, std::string_view name, std::string_view message,
                      std::size_t max_bytes);
/// A string field that may be absent (and, where `null_is_absent`, null): "" then;
/// otherwise as required_text with `may_be_empty`.
std::string optional_text(const JsonObject& body, std::string_view name, std::string_view message,
                          std::size_t max_bytes, bool null_is_absent = false);
/// A boolean field; `fallback` when absent, ProtocolError when of another type.
bool boolean(const JsonObject& body, std::string_view name, std::string_view message,
             bool fallback);
/// An array of strings (absent: empty); ProtocolError naming the field and the item.
std::vector<std::string> strings(const JsonObject& body, std::string_view name,
                                 std::string_view message);
/// An object of string values; ProtocolError naming the field and the key.
std::map<std::string, std::string> string_map(const JsonObject& body, std::string_view name,
                                              std::string_view message);

}  // namespace slurmtune::protocol
