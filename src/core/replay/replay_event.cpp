#include "core/replay/replay_event.hpp"

#include <deque>

#include "core/error.hpp"
#include "core/json_reading.hpp"
#include "core/number_text.hpp"

namespace slurmtune::core {
namespace od = simdjson::ondemand;

struct ReplayEventReader::Parser {
  od::parser parser;
  // Strings simdjson refused for a lone surrogate, unescaped here: they live as long as
  // the line's other strings (until the next line).
  std::deque<std::string> scratch;
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

// Reads the values replay uses from one line.
class LineReader {
 public:
  LineReader(od::document& doc, std::string_view line, std::deque<std::string>& scratch)
      : reader_(doc, line), scratch_(scratch) {}

  const json_reading::ValueReader& reader() const { return reader_; }

  EventValue value(od::value value, bool with_members) {
    EventValue out;
    const od::json_type type = reader_.type(value);
    out.kind = kind_of(type);
    switch (type) {
      case od::json_type::number:
        out.number = reader_.number(value);
        break;
      case od::json_type::string:
        out.text = string(value);
        break;
      case od::json_type::boolean:
        out.text = reader_.boolean(value) ? std::string_view("true") : std::string_view("false");
        break;
      case od::json_type::null:
        reader_.null(value);
        break;
      case od::json_type::object:
        if (with_members) out.members = members(reader_.take(value.get_object()));
        break;
      case od::json_type::array:
        break;
    }
    return out;
  }

  // A config object's members as text a domain parses (numbers in shortest form).
  std::vector<ConfigMember> members(od::object object) {
    std::vector<ConfigMember> out;
    std::string key_scratch;
    for (auto field_result : object) {
      od::field field = reader_.take(std::move(field_result));
      ConfigMember member;
      member.name = std::string(reader_.key(field, key_scratch));
      EventValue v = value(field.value(), false);
      member.kind = v.kind;
      member.text = v.kind == EventKind::Number ? format_double(v.number) : std::string(v.text);
      out.push_back(std::move(member));
    }
    return out;
  }

 private:
  // A string value; one simdjson refused (a lone surrogate) is unescaped into a string
  // kept with the line's others, so that the view lives as long as theirs.
  std::string_view string(od::value& value) {
    std::string unescaped;
    const std::string_view text = reader_.string(value, unescaped);
    if (text.data() != unescaped.data()) return text;  // simdjson's own buffer
    return scratch_.emplace_back(std::move(unescaped));
  }

  json_reading::ValueReader reader_;
  std::deque<std::string>& scratch_;
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
         : name == "metrics" ? &event.metrics
         : name == "time"    ? &event.time
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
  od::document doc = json_reading::iterate_in_place(parser_->parser, line);
  parser_->scratch.clear();
  LineReader reader(doc, std::string_view(line.data(), size), parser_->scratch);
  const json_reading::ValueReader& values = reader.reader();
  od::json_type type{};
  if (doc.type().get(type)) values.fail(simdjson::TAPE_ERROR);
  if (type != od::json_type::object)
    throw InputError("expected a JSON object, not " + std::string(to_string(kind_of(type))));
  ReplayEvent event;
  std::string key_scratch;
  for (auto field_result : values.take(doc.get_object())) {
    od::field field = values.take(std::move(field_result));
    const std::string_view key = values.key(field, key_scratch);
    if (std::optional<EventValue>* slot = slot_of(event, key))
      *slot =
          reader.value(field.value(), key == "config" || key == "metrics");  // others are skipped
  }
  values.expect_end();  // a second value or stray text after the object breaks the line
  return event;
}

}  // namespace slurmtune::core
