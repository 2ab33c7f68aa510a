#pragma once
// The value of one hyperparameter in one trial.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace slurmtune::core {

/// A sampled hyperparameter: bool, integer, real or string (categorical).
using ParamValue = std::variant<bool, std::int64_t, double, std::string>;

/// A number's value as a double (bools as 0/1); throws UsageError for strings.
double as_number(const ParamValue& value);

/// Text as it is substituted into a trial's argv: shortest round-trip form for reals,
/// `true`/`false` for bools, the string itself for strings.
std::string to_text(const ParamValue& value);

/// JSON literal (strings quoted and escaped; non-finite reals as NaN/Infinity like Python).
std::string to_json(const ParamValue& value);

/// Name of the value's type as the study file spells it: bool, integer, float, string.
std::string_view type_name(const ParamValue& value);

}  // namespace slurmtune::core
