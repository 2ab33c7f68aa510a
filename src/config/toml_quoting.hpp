#pragma once
// TOML keys, strings and values written by hand where another program (Python's
// tomllib, toml++) parses them back: `best --format toml` and the keys of the resolved
// study. toml++ 3.3 writes a key that holds ' but no " bare, which is not TOML, so keys
// that are user names never go through its formatter.
#include <string>
#include <string_view>

#include "core/space/param_value.hpp"

namespace slurmtune::config {

/// A TOML key: bare when it is only A-Z a-z 0-9 _ -, otherwise a quoted basic string.
std::string toml_key(std::string_view name);
/// A TOML basic string, every control character escaped.
std::string toml_string(std::string_view text);
/// A value as TOML: strings quoted, reals with nan/inf spelled as TOML does.
std::string toml_value(const core::ParamValue& value);

}  // namespace slurmtune::config
