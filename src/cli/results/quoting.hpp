#pragma once
// Text written for another program to parse back: a POSIX shell (`best --format flags`)
// and spreadsheets (`export --formula-guard`); TOML is config/toml_quoting.hpp. Names and
// values come from the results file; each format quotes them by its own rules.
#include <string>
#include <string_view>

namespace slurmtune::cli {

/// One shell word that a POSIX shell reads back as `text` (single-quoted unless every
/// character is one that needs no quoting).
std::string shell_word(std::string_view text);
/// A spreadsheet cell that a spreadsheet shows as text: one starting with =, +, -, @,
/// a tab or a carriage return gets a leading ' (OWASP's guard against formula injection).
std::string formula_guarded(std::string_view text);

}  // namespace slurmtune::cli
