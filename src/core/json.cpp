#include "core/json.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/search/param_value.hpp"
#include "core/text.hpp"

namespace slurmtune::core {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  JsonValue document() {
    JsonValue v = value(0);
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("invalid JSON at column " + std::to_string(pos_ + 1) + ": " + what);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\n'))
      ++pos_;
  }
  bool consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  JsonValue value(int depth) {
    if (depth > 64) fail("nesting deeper than 64 levels");
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end of text");
    const char c = text_[pos_];
    if (c == '{') return JsonValue{object(depth)};
    if (c == '[') return JsonValue{array(depth)};
    if (c == '"') return JsonValue{string()};
    if (consume("true")) return JsonValue{true};
    if (consume("false")) return JsonValue{false};
    if (consume("null")) return JsonValue{nullptr};
    if (consume("NaN")) return JsonValue{std::numeric_limits<double>::quiet_NaN()};
    if (consume("Infinity")) return JsonValue{std::numeric_limits<double>::infinity()};
    if (consume("-Infinity")) return JsonValue{-std::numeric_limits<double>::infinity()};
    return JsonValue{number()};
  }
  // A number too large or too small for a double reads as Python reads it: 1e400 is
  // Infinity, 1e-400 is 0 (the fields that need finite numbers then refuse it by name).
  static double out_of_range(std::string_view text) {
    const bool negative = text.front() == '-';
    const auto e = text.find_first_of("eE");
    const bool tiny = e != std::string_view::npos && e + 1 < text.size() && text[e + 1] == '-';
    const double magnitude = tiny ? 0.0 : std::numeric_limits<double>::infinity();
    return negative ? -magnitude : magnitude;
  }
  double number() {
    const std::size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() &&
           std::string_view("0123456789.eE+-").find(text_[pos_]) != std::string_view::npos)
      ++pos_;
    double v = 0;
    const std::string_view text = text_.substr(start, pos_ - start);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range && end == text.data() + text.size())
      return out_of_range(text);
    if (ec != std::errc() || end != text_.data() + pos_ || start == pos_) {
      pos_ = start;
      fail("expected a value");
    }
    return v;
  }
  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      c = text_[pos_++];
      switch (c) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u':
          out += unicode_escape();
          break;
        default:
          out += c;
      }
    }
    if (pos_ >= text_.size()) fail("unterminated string");
    ++pos_;  // closing quote
    return out;
  }
  // \uXXXX as UTF-8. A surrogate pair (\uD83D\uDE00, as Python's json writes every
  // character beyond U+FFFF) is one code point; a lone surrogate has no UTF-8 form and
  // becomes U+FFFD, so that no ill-formed text reaches a name or the results file.
  std::string unicode_escape() {
    char32_t code = hex4();
    if (code >= 0xD800 && code <= 0xDBFF && text_.substr(pos_, 2) == "\\u") {
      const std::size_t at = pos_;
      pos_ += 2;
      const char32_t low = hex4();
      if (low >= 0xDC00 && low <= 0xDFFF)
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
      else
        pos_ = at;  // not a pair: the next escape stands alone
    }
    return utf8_encode(code);
  }
  char32_t hex4() {
    if (pos_ + 4 > text_.size()) fail("truncated \\u escape");
    unsigned code = 0;
    const auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + pos_ + 4, code, 16);
    if (ec != std::errc() || end != text_.data() + pos_ + 4) fail("bad \\u escape");
    pos_ += 4;
    return code;
  }
  JsonArray array(int depth) {
    ++pos_;
    JsonArray out;
    skip_space();
    if (consume("]")) return out;
    while (true) {
      out.push_back(value(depth + 1));
      skip_space();
      if (consume("]")) return out;
      if (!consume(",")) fail("expected ',' or ']' in an array");
    }
  }
  JsonObject object(int depth) {
    ++pos_;
    JsonObject out;
    skip_space();
    if (consume("}")) return out;
    while (true) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') fail("expected a quoted key");
      std::string key = string();
      skip_space();
      if (!consume(":")) fail("expected ':' after key \"" + key + "\"");
      out.insert_or_assign(std::move(key), value(depth + 1));
      skip_space();
      if (consume("}")) return out;
      if (!consume(",")) fail("expected ',' or '}' in an object");
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string_view JsonValue::type_name() const {
  static constexpr std::string_view names[] = {"null",   "bool",  "number",
                                               "string", "array", "object"};
  return names[data.index()];
}

JsonValue parse_json(std::string_view text) {
  return Parser(text).document();
}

std::string to_json_text(const JsonValue& value) {
  struct Writer {
    std::string operator()(std::nullptr_t) const { return "null"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(double d) const { return to_json(ParamValue{d}); }
    std::string operator()(const std::string& s) const { return json_quote(s); }
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
        out += json_quote(key);
        out += ": ";
        out += to_json_text(v);
      }
      return out + "}";
    }
  };
  return std::visit(Writer{}, value.data);
}

}  // namespace slurmtune::core
