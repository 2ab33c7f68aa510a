#pragma once
// A bound on what reaches the TOML parser: toml++ 3.3 recurses once per part of a dotted
// key (`a.b.c = 1`, `[a.b.c]`), so a key of tens of thousands of parts overflows the
// stack (SIGSEGV) in `validate`, and in `status` or a warm start reading a results file
// that stores such a study. The text is scanned first, strings and comments skipped.
#include <cstddef>
#include <string>
#include <string_view>

namespace slurmtune::config {

/// The most parts a dotted key may have.
inline constexpr std::size_t kMaxKeyParts = 64;

/// Throws StudyFileError "SOURCE:LINE:COLUMN: a dotted key of more than 64 parts ..." at
/// the first key past the bound; returns otherwise (the text need not be valid TOML).
void check_key_depth(std::string_view text, const std::string& source);

}  // namespace slurmtune::config
