#include "config/toml_quoting.hpp"

#include <cmath>
#include <cstdio>

namespace slurmtune::config {
namespace {

bool is_bare_key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

std::string toml_key(std::string_view name) {
  for (const char c : name)
    if (!is_bare_key_char(c)) return toml_string(name);
  return name.empty() ? toml_string(name) : std::string(name);
}

std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7F) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04X", static_cast<unsigned>(byte));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string toml_value(const core::ParamValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return toml_string(*s);
  if (const auto* d = std::get_if<double>(&value)) {
    if (std::isnan(*d)) return "nan";
    if (std::isinf(*d)) return *d > 0 ? "inf" : "-inf";
  }
  return core::to_text(value);
}

}  // namespace slurmtune::config
