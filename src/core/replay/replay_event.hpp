#pragma once
// One line of a replay event log (replay.hpp), read with simdjson's on-demand API
// straight into the fields replay uses: no tree of the whole line is built
// (doc/performance/control-plane.md#json-readers-issue-27-4-choose-a-library-by-measurement).
// Python writes these logs, so NaN, Infinity and -Infinity are numbers here, as Python's json
// module reads them.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace slurmtune::core {

/// What a JSON value is; its name in messages ("number", "string", ...).
enum class EventKind { Number, String, Bool, Null, Array, Object };
std::string_view to_string(EventKind kind);

/// A member of a start's "config" object, as text a parameter's domain parses.
struct ConfigMember {
  std::string name;
  EventKind kind = EventKind::Null;
  std::string text;  ///< number: shortest round-trip form; string; "true"/"false"
};

/// A field's value as the line gave it.
struct EventValue {
  EventKind kind = EventKind::Null;
  double number = 0;  ///< a number
  /// A string, valid until the reader reads the next line.
  std::string_view text;
  std::vector<ConfigMember> members;  ///< an object
};

/// The fields replay reads; other fields are skipped.
struct ReplayEvent {
  std::optional<EventValue> type, trial, step, value, bracket, state, config, time;
  /// A report's other metrics, by name: {"latency_ms": 3.5, ...}.
  std::optional<EventValue> metrics;
  /// The field called `name` (one of the above), or nullptr when the line lacks it.
  const EventValue* field(std::string_view name) const;
};

class ReplayEventReader {
 public:
  ReplayEventReader();
  ~ReplayEventReader();
  ReplayEventReader(const ReplayEventReader&) = delete;
  ReplayEventReader& operator=(const ReplayEventReader&) = delete;

  /// Reads one line (its capacity may grow: the parser reads a little past the end).
  /// InputError "invalid JSON at column N: why" or "expected a JSON object, not KIND".
  ReplayEvent read(std::string& line);

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;
};

}  // namespace slurmtune::core
