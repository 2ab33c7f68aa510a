#include "core/number_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/text.hpp"

namespace slurmtune::core {

std::string format_double(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, end);
  // Keep reals recognisable as reals when they happen to be integral ("2" -> "2.0").
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::optional<double> parse_double(std::string_view text) {
  double x = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, x);
  if (ec == std::errc() && ptr == end && !text.empty()) return x;
  if (text == "nan" || text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf" || text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-inf" || text == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names)
    out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string json_quote(std::string_view raw) {
  std::string repaired;
  if (!is_valid_utf8(raw)) repaired = repair_utf8(raw);
  const std::string_view text = repaired.empty() ? raw : std::string_view(repaired);
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace slurmtune::core
