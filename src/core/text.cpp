#include "core/text.hpp"

#include <cstdint>
#include <cstdio>

namespace slurmtune::core {
namespace {

struct Decoded {
  char32_t code_point;
  std::size_t length;
};

// One well-formed UTF-8 sequence at `at` (Unicode's table 3-7), or nullopt.
std::optional<Decoded> decode_at(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[at + i]); };
  const std::uint8_t lead = byte(0);
  if (lead < 0x80) return Decoded{lead, 1};
  std::size_t length = 0;
  std::uint8_t low = 0x80, high = 0xBF;  // the range of the second byte
  char32_t cp = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, cp = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, cp = lead & 0x07;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // nothing past U+10FFFF
  } else {
    return std::nullopt;
  }
  if (at + length > text.size()) return std::nullopt;
  for (std::size_t i = 1; i < length; ++i) {
    const std::uint8_t b = byte(i);
    if (b < (i == 1 ? low : 0x80) || b > (i == 1 ? high : 0xBF)) return std::nullopt;
    cp = (cp << 6) | (b & 0x3F);
  }
  return Decoded{cp, length};
}

bool is_control(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

bool is_bidi_control(char32_t cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

// Characters that draw nothing: two names that differ only by one look the same on every
// screen (a zero-width space, joiners, the word joiner and invisible operators, the byte
// order mark, the soft hyphen, the combining grapheme joiner, Hangul fillers).
bool is_invisible(char32_t cp) {
  return cp == 0x00AD || cp == 0x034F || cp == 0x180E || (cp >= 0x200B && cp <= 0x200D) ||
         (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF || cp == 0x115F || cp == 0x1160 ||
         cp == 0x3164 || cp == 0xFFA0;
}

// Combining diacritical marks (the general, extended and supplement blocks, those for
// symbols and the half marks): "é" written as "e" + U+0301 looks like U+00E9, and two
// names that differ only in that encoding would be two parameters. Names keep the
// precomposed letter (NFC) instead; scripts whose letters are built from marks of their
// own blocks (Devanagari, Hangul jamo) are not affected.
bool is_combining_diacritic(char32_t cp) {
  return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) ||
         (cp >= 0x1DC0 && cp <= 0x1DFF) || (cp >= 0x20D0 && cp <= 0x20FF) ||
         (cp >= 0xFE20 && cp <= 0xFE2F);
}

std::string code_point_name(char32_t cp) {
  char text[16];
  std::snprintf(text, sizeof text, "U+%04X", static_cast<unsigned>(cp));
  return text;
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

std::string utf8_encode(char32_t cp) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return std::string(kReplacement);
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto d = decode_at(text, i);
    if (!d) return false;
    i += d->length;
  }
  return true;
}

std::string repair_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto d = decode_at(text, i);
    if (!d) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (d->code_point != 0) out.append(text.substr(i, d->length));
    i += d->length;
  }
  return out;
}

std::string fit_utf8(std::string_view text, std::size_t max_bytes) {
  std::string repaired = repair_utf8(text);
  if (repaired.size() <= max_bytes) return repaired;
  if (max_bytes < kCutMarker.size()) return {};
  // Whole characters up to the room left for the marker.
  const std::size_t room = max_bytes - kCutMarker.size();
  std::size_t end = 0;
  while (end < repaired.size()) {
    const std::size_t length = decode_at(repaired, end)->length;
    if (end + length > room) break;
    end += length;
  }
  repaired.resize(end);
  return repaired += kCutMarker;
}

std::string fit_utf8_head_and_end(std::string_view text, std::size_t max_bytes) {
  std::string repaired = repair_utf8(text);
  if (repaired.size() <= max_bytes) return repaired;
  if (max_bytes < 4 * kCutMarker.size()) return fit_utf8(repaired, max_bytes);
  const auto continuation = [&](std::size_t i) {
    return (static_cast<unsigned char>(repaired[i]) & 0xC0U) == 0x80U;
  };
  // The first line with its newline, or the first third of the room, in whole characters.
  const std::size_t newline = repaired.find('\n');
  std::size_t head_end =
      std::min(newline == std::string::npos ? repaired.size() : newline + 1, max_bytes / 3);
  while (head_end > 0 && continuation(head_end))
    --head_end;
  // The longest end of whole characters that fits after the head and the marker.
  std::size_t start = repaired.size() - (max_bytes - head_end - kCutMarker.size());
  while (start < repaired.size() && continuation(start))
    ++start;
  start = std::max(start, head_end);
  return repaired.substr(0, head_end) + std::string(kCutMarker) + repaired.substr(start);
}

std::optional<std::string> name_problem(std::string_view text) {
  if (text.empty()) return "must not be empty";
  for (std::size_t i = 0; i < text.size();) {
    const auto d = decode_at(text, i);
    if (!d) return "is not valid UTF-8 (byte " + std::to_string(i) + ")";
    if (is_control(d->code_point))
      return "holds the control character " + code_point_name(d->code_point) + " at byte " +
             std::to_string(i) + "; use printable characters only";
    if (is_bidi_control(d->code_point))
      return "holds the invisible bidirectional control " + code_point_name(d->code_point) +
             " at byte " + std::to_string(i) +
             ", which reorders the text around it on screen; remove it";
    if (is_invisible(d->code_point))
      return "holds the invisible character " + code_point_name(d->code_point) + " at byte " +
             std::to_string(i) + ", so two different names could look the same; remove it";
    if (is_combining_diacritic(d->code_point))
      return "holds the combining mark " + code_point_name(d->code_point) + " at byte " +
             std::to_string(i) +
             ", so it could look like another name spelt with the accented letter; write the "
             "letter as one character (Unicode NFC)";
    i += d->length;
  }
  return std::nullopt;
}

std::string visible(std::string_view text) {
  const std::string repaired = repair_utf8(text);
  std::string out;
  for (std::size_t i = 0; i < repaired.size();) {
    const Decoded d = *decode_at(repaired, i);
    if (is_control(d.code_point) || is_bidi_control(d.code_point) || is_invisible(d.code_point) ||
        is_combining_diacritic(d.code_point)) {
      char escaped[16];
      std::snprintf(escaped, sizeof escaped, "\\u%04X", static_cast<unsigned>(d.code_point));
      out += escaped;
    } else {
      out.append(repaired, i, d.length);
    }
    i += d.length;
  }
  return out;
}

}  // namespace slurmtune::core
