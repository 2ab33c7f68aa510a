#pragma once
// A small JSON reader, kept for the control plane's payloads until they move to
// simdjson as replay's event lines have (schedulers/replay_event.hpp;
// doc/performance.md#json-readers). It accepts what Python's json module writes,
// including the non-standard NaN, Infinity and -Infinity (nlohmann/json refuses them,
// RapidJSON reads them behind a flag, simdjson's on-demand API as raw tokens). Errors say
// at which byte the text breaks.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace slurmtune::core {

struct JsonValue;
using JsonObject = std::map<std::string, JsonValue, std::less<>>;
using JsonArray = std::vector<JsonValue>;

struct JsonValue {
  std::variant<std::nullptr_t, bool, double, std::string, JsonArray, JsonObject> data;

  bool is_number() const { return std::holds_alternative<double>(data); }
  bool is_string() const { return std::holds_alternative<std::string>(data); }
  bool is_object() const { return std::holds_alternative<JsonObject>(data); }
  /// Name of the held type: null, bool, number, string, array, object.
  std::string_view type_name() const;
};

/// Parses one JSON document; throws InputError("... at column N: ...") on bad text.
JsonValue parse_json(std::string_view text);

/// JSON text of a value (NaN and infinities as Python writes them), round-tripping
/// through parse_json.
std::string to_json_text(const JsonValue& value);

}  // namespace slurmtune::core
