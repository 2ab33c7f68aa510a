#pragma once
// Text written for another program to parse back: TOML (`best --format toml`), a POSIX
// shell (`best --format flags`) and spreadsheets (`export --formula-guard`). Names and
// values come from the study file; each format quotes them by its own rules.
#include <string>
#include <string_view>

#include "core/search/param_value.hpp"

namespace slurmtune::cli {

/// A TOML key: bare when it is only A-Z a-z 0-9 _ -, otherwise a quoted basic string.
std::string toml_key(std::string_view name);
/// A TOML basic string, every control character escaped.
std::string toml_string(std::string_view text);
/// A value as TOML: strings quoted, reals with nan/inf spelled as TOML does.
std::string toml_value(const core::ParamValue& value);
/// One shell word that a POSIX shell reads back as `text` (single-quoted unless every
/// character is one that needs no quoting).
std::string shell_word(std::string_view text);
/// A spreadsheet cell that a spreadsheet shows as text: one starting with =, +, -, @,
/// a tab or a carriage return gets a leading ' (OWASP's guard against formula injection).
std::string formula_guarded(std::string_view text);

}  // namespace slurmtune::cli
