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

/// Shortest text that reads back as the same double (std::to_chars).
std::string format_double(double value);

/// `text` as a double: what std::from_chars reads, whole, plus Python's spellings of the
/// non-finite values (nan, NaN, inf, Infinity, -inf, -Infinity); nullopt otherwise.
std::optional<double> parse_double(std::string_view text);

/// "a, b, c": names for messages.
std::string join_names(const std::vector<std::string>& names);

/// JSON string literal with escapes. Text that is not UTF-8 (a trial's stderr may be
/// anything) is repaired first (core/text.hpp): JSON is UTF-8, and readers refuse it.
std::string json_quote(std::string_view text);

}  // namespace slurmtune::core
