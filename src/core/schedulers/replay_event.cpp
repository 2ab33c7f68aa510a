#include "core/schedulers/replay_event.hpp"

#include <simdjson.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/search/param_value.hpp"
#include "core/text.hpp"

namespace slurmtune::core {
namespace od = simdjson::ondemand;

struct ReplayEventReader::Parser {
  od::parser parser;
};

namespace {

EventKind kind_of(od::json_type type) {
  switch (type) {
    case od::json_type::array:
      return EventKind::Array;
    case od::json_type::object:
      return EventKind::Object;
    case od::json_type::number:
      return EventKind::Number;
    case od::json_type::string:
      return EventKind::String;
    case od::json_type::boolean:
      return EventKind::Bool;
    case od::json_type::null:
      break;
  }
  return EventKind::Null;
}

// Reads one line's values, throwing "invalid JSON at column N" where the text breaks.
class LineReader {
 public:
  LineReader(od::document& doc, std::string_view line) : doc_(doc), line_(line) {}

  [[noreturn]] void fail(simdjson::error_code error) { fail(simdjson::error_message(error)); }
  [[noreturn]] void fail(const std::string& why) {
    std::size_t column = line_.size();
    const char* at = nullptr;
    if (!doc_.current_location().get(at) && at >= line_.data() && at <= line_.data() + line_.size())
      column = static_cast<std::size_t>(at - line_.data());
    throw InputError("invalid JSON at column " + std::to_string(column + 1) + ": " + why);
  }
  template <class T>
  T take(simdjson::simdjson_result<T>&& result) {
    T out;
    if (const auto error = std::move(result).get(out)) fail(error);
    return out;
  }

  // NaN, Infinity and -Infinity: not JSON, so simdjson has no type for them, but its raw
  // token says which one it is.
  // The value's text up to the next structural character, less trailing blanks.
  static std::string_view token_of(od::value& value) {
    std::string_view token = value.raw_json_token();
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\r'))
      token.remove_suffix(1);
    return token;
  }

  std::optional<double> python_special(od::value& value) {
    const std::string_view token = token_of(value);
    if (token == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (token == "Infinity") return std::numeric_limits<double>::infinity();
    if (token == "-Infinity") return -std::numeric_limits<double>::infinity();
    return std::nullopt;
  }

  EventValue value(od::value value, bool with_members) {
    EventValue out;
    od::json_type type{};
    if (value.type().get(type)) {
      if (const auto special = python_special(value)) {
        out.kind = EventKind::Number;
        out.number = *special;
        return out;
      }
      fail("expected a value, not '" + visible(token_of(value)) + "'");
    }
    out.kind = kind_of(type);
    switch (type) {
      case od::json_type::number:
        if (value.get_double().get(out.number)) {
          const auto special = python_special(value);
          if (!special) fail(simdjson::NUMBER_ERROR);
          out.number = *special;
        }
        break;
      case od::json_type::string:
        out.text = take(value.get_string());
        break;
      case od::json_type::boolean:
        out.text = take(value.get_bool()) ? std::string_view("true") : std::string_view("false");
        break;
      case od::json_type::null:
        if (!take(value.is_null())) fail(simdjson::N_ATOM_ERROR);
        break;
      case od::json_type::object:
        if (with_members) out.members = members(take(value.get_object()));
        break;
      case od::json_type::array:
        break;
    }
    return out;
  }

  // A config object's members as text a domain parses (numbers in shortest form).
  std::vector<ConfigMember> members(od::object object) {
    std::vector<ConfigMember> out;
    for (auto field_result : object) {
      od::field field = take(std::move(field_result));
      ConfigMember member;
      member.name = std::string(take(field.unescaped_key()));
      EventValue v = value(field.value(), false);
      member.kind = v.kind;
      member.text = v.kind == EventKind::Number ? format_double(v.number) : std::string(v.text);
      out.push_back(std::move(member));
    }
    return out;
  }

 private:
  od::document& doc_;
  std::string_view line_;
};

// The field of `event` (const or not) that `name` fills, or nullptr for one replay skips.
template <class Event>
auto* slot_of(Event& event, std::string_view name) {
  return name == "type"      ? &event.type
         : name == "trial"   ? &event.trial
         : name == "step"    ? &event.step
         : name == "value"   ? &event.value
         : name == "bracket" ? &event.bracket
         : name == "state"   ? &event.state
         : name == "config"  ? &event.config
                             : nullptr;
}

}  // namespace

std::string_view to_string(EventKind kind) {
  switch (kind) {
    case EventKind::Number:
      return "number";
    case EventKind::String:
      return "string";
    case EventKind::Bool:
      return "bool";
    case EventKind::Null:
      return "null";
    case EventKind::Array:
      return "array";
    case EventKind::Object:
      break;
  }
  return "object";
}

const EventValue* ReplayEvent::field(std::string_view name) const {
  const std::optional<EventValue>* slot = slot_of(*this, name);
  return slot && *slot ? &**slot : nullptr;
}

ReplayEventReader::ReplayEventReader() : parser_(std::make_unique<Parser>()) {}
ReplayEventReader::~ReplayEventReader() = default;

ReplayEvent ReplayEventReader::read(std::string& line) {
  const std::size_t size = line.size();
  if (line.capacity() < size + simdjson::SIMDJSON_PADDING)
    line.reserve(size + simdjson::SIMDJSON_PADDING);
  od::document doc;
  if (const auto error = parser_->parser.iterate(line.data(), size, line.capacity()).get(doc))
    throw InputError("invalid JSON at column 1: " + std::string(simdjson::error_message(error)));
  LineReader reader(doc, std::string_view(line.data(), size));
  od::json_type type{};
  if (doc.type().get(type)) reader.fail(simdjson::TAPE_ERROR);
  if (type != od::json_type::object)
    throw InputError("expected a JSON object, not " + std::string(to_string(kind_of(type))));
  ReplayEvent event;
  for (auto field_result : reader.take(doc.get_object())) {
    od::field field = reader.take(std::move(field_result));
    const std::string_view key = reader.take(field.unescaped_key());
    if (std::optional<EventValue>* slot = slot_of(event, key))
      *slot = reader.value(field.value(), key == "config");  // others are skipped
  }
  // Anything after the object (a second value, stray text) breaks the line.
  const char* at = nullptr;
  if (!doc.current_location().get(at)) reader.fail(simdjson::TRAILING_CONTENT);
  return event;
}

}  // namespace slurmtune::core
