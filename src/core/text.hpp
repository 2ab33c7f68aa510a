#pragma once
// Text that comes from users and trials (names, choice values, error messages, paths)
// as UTF-8: checked, repaired, and cut only at character boundaries, so that every
// output (the results file, CSV, TOML, the HTML page) can decode what it is given.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace slurmtune::core {

/// The marker that ends a text cut to fit a field: "…" (U+2026, 3 bytes).
inline constexpr std::string_view kCutMarker = "\xE2\x80\xA6";

/// Code point `cp` as UTF-8; a surrogate or a value beyond U+10FFFF becomes U+FFFD.
std::string utf8_encode(char32_t cp);

/// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points
/// beyond U+10FFFF).
bool is_valid_utf8(std::string_view text);

/// `text` with each ill-formed sequence replaced by U+FFFD and NUL bytes removed: what
/// a trial printed in any encoding becomes text every reader can decode.
std::string repair_utf8(std::string_view text);

/// The longest prefix of repaired `text` that fits `max_bytes` without splitting a
/// character; when anything was cut it ends with kCutMarker (still within max_bytes).
std::string fit_utf8(std::string_view text, std::size_t max_bytes);

/// For an error: its first line (cut to a third of `max_bytes` if longer), then as much
/// of its end as fits, with kCutMarker where text was left out. Where a program failed
/// is at the end of what it printed (Python's exception follows its traceback), and
/// what failed is on the first line (the exit status).
std::string fit_utf8_head_and_end(std::string_view text, std::size_t max_bytes);

/// Why `text` cannot be a name (of a study, parameter, metric, resource) or a choice
/// value, or nullopt when it can: it is empty, is not UTF-8, or holds a control
/// character (C0, DEL, C1), an invisible bidirectional control (U+061C, U+200E,
/// U+200F, U+202A-U+202E, U+2066-U+2069), which would reorder or hide text around it
/// in a terminal, a spreadsheet or a page, or a character that draws nothing (U+200B-
/// U+200D, U+2060-U+2064, U+FEFF, U+00AD, ...) or a combining diacritical mark (U+0300-
/// U+036F and kin: "e" + U+0301 beside the precomposed "é"), with which two names look
/// the same. The reason names the character and where.
std::optional<std::string> name_problem(std::string_view text);

/// `text` for a message on a terminal: repaired, with control and bidirectional
/// characters written as \uXXXX, so a name that name_problem() refuses can be shown.
std::string visible(std::string_view text);

}  // namespace slurmtune::core
