#include "core/space/param_value.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/number_text.hpp"

namespace slurmtune::core {

double as_number(const ParamValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&value)) return *d;
  if (const auto* b = std::get_if<bool>(&value)) return *b ? 1.0 : 0.0;
  throw UsageError("a string value has no position on a numeric domain");
}

std::string to_text(const ParamValue& value) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return format_double(d); }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(Visitor{}, value);
}

std::string to_json(const ParamValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return json_quote(*s);
  return to_text(value);
}

std::string_view type_name(const ParamValue& value) {
  static constexpr std::string_view names[] = {"bool", "integer", "float", "string"};
  return names[value.index()];
}

}  // namespace slurmtune::core
