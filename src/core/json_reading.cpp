#include "core/json_reading.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "core/text.hpp"

namespace slurmtune::core::json_reading {
namespace {

// The value's text up to the next structural character, less trailing blanks.
std::string_view token_of(od::value& value) {
  std::string_view token = value.raw_json_token();
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\r' ||
                            token.back() == '\n'))
    token.remove_suffix(1);
  return token;
}

// NaN, Infinity and -Infinity: not JSON, so simdjson has no type for them, but the raw
// token says which one it is.
std::optional<double> python_special(std::string_view token) {
  if (token == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (token == "Infinity") return std::numeric_limits<double>::infinity();
  if (token == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

// A number token too large or too small for a double, as Python reads it: 1e400 is
// Infinity, 1e-400 is 0 (fields that need finite numbers refuse it by name).
std::optional<double> beyond_double(std::string_view token) {
  double v = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc::result_out_of_range || end != token.data() + token.size())
    return std::nullopt;
  const std::string copy(token);  // strtod rounds overflow and underflow as Python does
  return std::strtod(copy.c_str(), nullptr);
}

// The four hex digits of a \u escape at `at`, or nullopt when they are not there.
std::optional<char32_t> hex4(std::string_view text, std::size_t at) {
  unsigned code = 0;
  if (at + 4 > text.size()) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data() + at, text.data() + at + 4, code, 16);
  if (ec != std::errc() || end != text.data() + at + 4) return std::nullopt;
  return code;
}

// The string that starts after an opening quote at `body`, unescaped, where simdjson
// refused it for a lone surrogate escape: the pair \uD83D\uDE00 is one character (Python
// writes every character beyond U+FFFF so), a lone surrogate becomes U+FFFD. simdjson
// has already checked the text's structure, so the closing quote is there. Every other
// escape must be one of JSON's: nullopt for the rest (`"lo\ss"` was read as "loss").
std::optional<std::string> unescape_leniently(std::string_view body) {
  std::string out;
  std::size_t i = 0;
  while (i < body.size() && body[i] != '"') {
    const char c = body[i++];
    if (c != '\\' || i >= body.size()) {
      out += c;
      continue;
    }
    const char e = body[i++];
    switch (e) {
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
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'u': {
        const auto high = hex4(body, i);
        if (!high) return std::nullopt;
        char32_t code = *high;
        i += 4;
        if (code >= 0xD800 && code <= 0xDBFF && body.substr(i, 2) == "\\u") {
          const auto low = hex4(body, i + 2);
          if (low && *low >= 0xDC00 && *low <= 0xDFFF) {
            code = 0x10000 + ((code - 0xD800) << 10) + (*low - 0xDC00);
            i += 6;
          }
        }
        out += utf8_encode(code);  // a lone surrogate becomes U+FFFD
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return out;
}

constexpr const char* kInvalidEscape =
    "a string holds an escape JSON does not have (only \\\" \\\\ \\/ \\b \\f \\n \\r \\t "
    "and \\u with four hex digits)";

}  // namespace

od::document iterate_in_place(od::parser& parser, std::string& text) {
  if (text.capacity() < text.size() + simdjson::SIMDJSON_PADDING)
    text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  od::document doc;
  if (const auto error = parser.iterate(text.data(), text.size(), text.capacity()).get(doc))
    throw InputError("invalid JSON at column 1: " + std::string(simdjson::error_message(error)));
  return doc;
}

void ValueReader::fail(simdjson::error_code error) const {
  fail(simdjson::error_message(error));
}

void ValueReader::fail(const std::string& why) const {
  std::size_t column = text_.size();
  const char* at = nullptr;
  if (!doc_.current_location().get(at) && at >= text_.data() && at <= text_.data() + text_.size())
    column = static_cast<std::size_t>(at - text_.data());
  throw InputError("invalid JSON at column " + std::to_string(column + 1) + ": " + why);
}

od::json_type ValueReader::type(od::value& value) const {
  od::json_type type{};
  if (!value.type().get(type)) return type;
  const std::string_view token = token_of(value);
  if (python_special(token)) return od::json_type::number;
  fail("expected a value, not '" + visible(token) + "'");
}

double ValueReader::number(od::value& value) const {
  double out = 0;
  if (const auto error = value.get_double().get(out)) {
    const std::string_view token = token_of(value);
    if (const auto special = python_special(token)) return *special;
    if (const auto beyond = beyond_double(token)) return *beyond;
    fail(error);
  }
  return out;
}

std::string_view ValueReader::string(od::value& value, std::string& scratch) const {
  const std::string_view token = value.raw_json_token();  // before the read consumes it
  std::string_view out;
  if (const auto error = value.get_string().get(out)) {
    if (error != simdjson::STRING_ERROR || token.empty()) fail(error);
    auto text = unescape_leniently(token.substr(1));
    if (!text) fail(kInvalidEscape);
    scratch = std::move(*text);
    return scratch;
  }
  return out;
}

std::string_view ValueReader::key(od::field& field, std::string& scratch) const {
  const char* body = field.key().raw();  // after the opening quote
  std::string_view out;
  if (const auto error = field.unescaped_key().get(out)) {
    if (error != simdjson::STRING_ERROR) fail(error);
    const auto* end = text_.data() + text_.size();
    auto text = unescape_leniently(std::string_view(body, static_cast<std::size_t>(end - body)));
    if (!text) fail(kInvalidEscape);
    scratch = std::move(*text);
    return scratch;
  }
  return out;
}

bool ValueReader::boolean(od::value& value) const {
  bool out = false;
  if (value.get_bool().get(out)) fail("expected a value, not '" + visible(token_of(value)) + "'");
  return out;
}

void ValueReader::null(od::value& value) const {
  bool is_null = false;
  if (value.is_null().get(is_null) || !is_null)
    fail("expected a value, not '" + visible(token_of(value)) + "'");
}

void ValueReader::expect_end() const {
  const char* at = nullptr;
  if (!doc_.current_location().get(at)) fail(simdjson::TRAILING_CONTENT);
}

}  // namespace slurmtune::core::json_reading
