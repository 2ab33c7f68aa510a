#include "config/toml_quoting.hpp"

#include <cmath>

#include "core/number_text.hpp"

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
  // A JSON string is a TOML basic string (the same escapes, \uXXXX for other controls)
  // except for DEL, which JSON leaves as it is and TOML allows only escaped.
  std::string out = core::json_quote(text);
  for (auto at = out.find('\x7F'); at != std::string::npos; at = out.find('\x7F', at))
    out.replace(at, 1, "\\u007F");
  return out;
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
