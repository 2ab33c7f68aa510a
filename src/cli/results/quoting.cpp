#include "cli/results/quoting.hpp"

namespace slurmtune::cli {
namespace {

// Python's shlex.quote leaves these alone.
bool is_shell_safe(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '@' || c == '%' || c == '+' || c == '=' || c == ':' || c == ',' ||
         c == '.' || c == '/';
}

}  // namespace

std::string shell_word(std::string_view text) {
  bool safe = !text.empty();
  for (const char c : text)
    safe = safe && is_shell_safe(c);
  if (safe) return std::string(text);
  std::string out = "'";
  for (const char c : text)
    if (c == '\'')
      out.append("'\"'\"'");
    else
      out.push_back(c);
  return out + "'";
}

std::string formula_guarded(std::string_view text) {
  if (!text.empty() && (text[0] == '=' || text[0] == '+' || text[0] == '-' || text[0] == '@' ||
                        text[0] == '\t' || text[0] == '\r'))
    return std::string(1, '\'').append(text);
  return std::string(text);
}

}  // namespace slurmtune::cli
