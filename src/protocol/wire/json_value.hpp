#pragma once
// A control-plane payload as a tree of values, read by simdjson's on-demand API
// (core/json_reading.hpp: Python's NaN and Infinity, numbers beyond a double, lone
// surrogates) for the typed messages' decoders (fields.hpp), the clients' parameters and
// tests. An object keeps its members sorted by key, the last of duplicate keys counting
// as in Python's json; payloads have a handful of members, so a sorted vector is found
// faster than a std::map's nodes are built
// (doc/performance/control-plane.md#json-readers-issue-27-4-choose-a-library-by-measurement).
#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace slurmtune::protocol {

struct JsonValue;
using JsonArray = std::vector<JsonValue>;

/// A JSON object: members sorted by key, keys unique.
class JsonObject {
 public:
  /// One member (defined below: it holds a JsonValue, which can hold a JsonObject).
  struct Member;
  using const_iterator = std::vector<Member>::const_iterator;

  JsonObject() = default;
  /// Members in any order; of duplicate keys the last counts.
  explicit JsonObject(std::vector<Member> members);

  const_iterator begin() const;
  const_iterator end() const;
  std::size_t size() const;
  bool empty() const;
  /// The member called `key`, or end().
  const_iterator find(std::string_view key) const;
  bool contains(std::string_view key) const;
  /// The value called `key`; std::out_of_range when there is none.
  const JsonValue& at(std::string_view key) const;
  void insert_or_assign(std::string key, JsonValue value);

 private:
  std::vector<Member> members_;
};

struct JsonValue {
  std::variant<std::nullptr_t, bool, double, std::string, JsonArray, JsonObject> data;

  bool is_number() const { return std::holds_alternative<double>(data); }
  bool is_string() const { return std::holds_alternative<std::string>(data); }
  bool is_object() const { return std::holds_alternative<JsonObject>(data); }
  /// Name of the held type: null, bool, number, string, array, object.
  std::string_view type_name() const;
};

struct JsonObject::Member {
  std::string key;
  JsonValue value;
};

// Defined once a member is complete.
inline JsonObject::const_iterator JsonObject::begin() const {
  return members_.begin();
}
inline JsonObject::const_iterator JsonObject::end() const {
  return members_.end();
}
inline std::size_t JsonObject::size() const {
  return members_.size();
}
inline bool JsonObject::empty() const {
  return members_.empty();
}
inline bool JsonObject::contains(std::string_view key) const {
  return find(key) != end();
}

/// Parses one JSON document, an object or an array; InputError("invalid JSON at column N:
/// why") on bad text, on any other root and on nesting deeper than 64 levels.
JsonValue parse_json(std::string_view text);

/// JSON text of a value (NaN and infinities as Python writes them), round-tripping
/// through parse_json.
std::string to_json_text(const JsonValue& value);

}  // namespace slurmtune::protocol
