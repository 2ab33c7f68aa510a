#pragma once
// Numbers and names as text, for messages, TOML, JSON and the results file: the one
// spelling of a double that reads back the same, its parse, and JSON string quoting.
// Every layer uses them (the wire protocol, the results file, the command line), so they
// live at the root of core, not with the search space.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace slurmtune::core {

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
