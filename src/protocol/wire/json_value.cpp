#include "protocol/wire/json_value.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/error.hpp"
#include "core/json_reading.hpp"
#include "core/number_text.hpp"
#include "core/space/param_value.hpp"

namespace slurmtune::protocol {
namespace {

namespace od = simdjson::ondemand;
using core::json_reading::ValueReader;

constexpr int kMaxDepth = 64;

bool key_less(const JsonObject::Member& a, const JsonObject::Member& b) {
  return a.key < b.key;
}

class TreeReader {
 public:
  TreeReader(od::document& doc, std::string_view text) : reader_(doc, text) {}

  const ValueReader& reader() const { return reader_; }

  JsonValue value(od::value value, int depth) {
    if (depth > kMaxDepth) reader_.fail("nesting deeper than 64 levels");
    switch (reader_.type(value)) {
      case od::json_type::number:
        return JsonValue{reader_.number(value)};
      case od::json_type::string:
        return JsonValue{std::string(reader_.string(value, scratch_))};
      case od::json_type::boolean:
        return JsonValue{reader_.boolean(value)};
      case od::json_type::null:
        reader_.null(value);
        return JsonValue{nullptr};
      case od::json_type::array:
        return JsonValue{array(reader_.take(value.get_array()), depth)};
      case od::json_type::object:
        break;
    }
    return JsonValue{object(reader_.take(value.get_object()), depth)};
  }

  JsonArray array(od::array array, int depth) {
    JsonArray out;
    for (auto item : array)
      out.push_back(value(reader_.take(item), depth + 1));
    return out;
  }

  JsonObject object(od::object object, int depth) {
    std::vector<JsonObject::Member> members;
    members.reserve(4);  // most payloads' objects have fewer members: one allocation
    for (auto field_result : object) {
      od::field field = reader_.take(std::move(field_result));
      std::string key(reader_.key(field, scratch_));
      members.push_back({std::move(key), value(field.value(), depth + 1)});
    }
    return JsonObject(std::move(members));
  }

 private:
  ValueReader reader_;
  std::string scratch_;  // a string simdjson refused for a lone surrogate, unescaped
};

}  // namespace

JsonObject::JsonObject(std::vector<Member> members) : members_(std::move(members)) {
  // Stable: payloads have a handful of members, which insertion sorts fastest; a large
  // object (a long environment) must not cost quadratic time.
  if (members_.size() > 16) {
    std::stable_sort(members_.begin(), members_.end(), key_less);
  } else {
    for (std::size_t i = 1; i < members_.size(); ++i)
      for (std::size_t j = i; j > 0 && key_less(members_[j], members_[j - 1]); --j)
        std::swap(members_[j], members_[j - 1]);
  }
  // Of each run of equal keys the last (in the text's order) counts.
  std::size_t kept = 0;
  for (auto& member : members_) {
    if (kept == 0 || members_[kept - 1].key != member.key) ++kept;
    if (&members_[kept - 1] != &member) members_[kept - 1] = std::move(member);
  }
  members_.resize(kept);
}

JsonObject::const_iterator JsonObject::find(std::string_view key) const {
  const auto it = std::lower_bound(members_.begin(), members_.end(), key,
                                   [](const Member& m, std::string_view k) { return m.key < k; });
  return it != members_.end() && it->key == key ? it : members_.end();
}

const JsonValue& JsonObject::at(std::string_view key) const {
  const auto it = find(key);
  if (it == end()) throw std::out_of_range("JSON object has no member '" + std::string(key) + "'");
  return it->value;
}

void JsonObject::insert_or_assign(std::string key, JsonValue value) {
  auto it = std::lower_bound(members_.begin(), members_.end(), key,
                             [](const Member& m, const std::string& k) { return m.key < k; });
  if (it != members_.end() && it->key == key)
    it->value = std::move(value);
  else
    members_.insert(it, Member{std::move(key), std::move(value)});
}

std::string_view JsonValue::type_name() const {
  static constexpr std::string_view names[] = {"null",   "bool",  "number",
                                               "string", "array", "object"};
  return names[data.index()];
}

JsonValue parse_json(std::string_view text) {
  // One parser and one padded buffer a thread, reused: their memory stays allocated.
  thread_local od::parser parser;
  thread_local std::string buffer;
  buffer.assign(text);
  od::document doc = core::json_reading::iterate_in_place(parser, buffer);
  TreeReader tree(doc, std::string_view(buffer.data(), text.size()));
  const ValueReader& values = tree.reader();
  // simdjson hands out no value for a scalar root; no payload is one.
  od::json_type type{};
  if (doc.type().get(type) || (type != od::json_type::object && type != od::json_type::array))
    values.fail("expected a JSON object or array");
  JsonValue out = tree.value(values.take(doc.get_value()), 0);
  values.expect_end();
  return out;
}

std::string to_json_text(const JsonValue& value) {
  struct Writer {
    std::string operator()(std::nullptr_t) const { return "null"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(double d) const { return core::to_json(core::ParamValue{d}); }
    std::string operator()(const std::string& s) const { return core::json_quote(s); }
    std::string operator()(const JsonArray& a) const {
      std::string out = "[";
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (i) out += ", ";
        out += to_json_text(a[i]);
      }
      return out + "]";
    }
    std::string operator()(const JsonObject& o) const {
      std::string out = "{";
      for (const auto& [key, v] : o) {
        if (out.size() > 1) out += ", ";
        out += core::json_quote(key);
        out += ": ";
        out += to_json_text(v);
      }
      return out + "}";
    }
  };
  return std::visit(Writer{}, value.data);
}

}  // namespace slurmtune::protocol
