#include "config/toml_depth.hpp"

#include "config/study_file.hpp"

namespace slurmtune::config {
namespace {

// Where the scan is: a position and its line and column (1-based, in bytes).
struct Cursor {
  std::string_view text;
  std::size_t at = 0;
  std::size_t line = 1;
  std::size_t line_start = 0;

  bool done() const { return at >= text.size(); }
  char peek(std::size_t ahead = 0) const {
    return at + ahead < text.size() ? text[at + ahead] : '\0';
  }
  bool starts(std::string_view s) const { return text.substr(at, s.size()) == s; }
  void advance() {
    if (text[at] == '\n') {
      ++line;
      line_start = at + 1;
    }
    ++at;
  }
  std::size_t column() const { return at - line_start + 1; }
};

// Skips a string starting at the cursor: basic or literal, one-line or multi-line.
void skip_string(Cursor& c) {
  const char quote = c.peek();
  const std::string triple(3, quote);
  if (c.starts(triple)) {
    for (int i = 0; i < 3; ++i)
      c.advance();
    while (!c.done() && !c.starts(triple)) {
      if (quote == '"' && c.peek() == '\\' && c.at + 1 < c.text.size()) c.advance();
      c.advance();
    }
    for (int i = 0; i < 3 && !c.done(); ++i)
      c.advance();
    return;
  }
  c.advance();
  while (!c.done() && c.peek() != quote && c.peek() != '\n') {
    if (quote == '"' && c.peek() == '\\' && c.at + 1 < c.text.size()) c.advance();
    c.advance();
  }
  if (!c.done() && c.peek() == quote) c.advance();
}

bool bare_key_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_' || ch == '-';
}

}  // namespace

void check_key_depth(std::string_view text, const std::string& source) {
  Cursor c{text};
  std::size_t parts = 0;  // dots seen in the current run of key parts, plus one
  std::size_t run_line = 1, run_column = 1;
  bool after_dot = false;  // the last token of the run was a dot
  while (!c.done()) {
    const char ch = c.peek();
    if (ch == '#') {
      while (!c.done() && c.peek() != '\n')
        c.advance();
      continue;
    }
    const bool part = ch == '"' || ch == '\'' || bare_key_char(ch);
    if (part) {
      if (!after_dot) {  // a new run begins
        parts = 1;
        run_line = c.line;
        run_column = c.column();
      }
      after_dot = false;
      if (ch == '"' || ch == '\'')
        skip_string(c);
      else
        while (!c.done() && bare_key_char(c.peek()))
          c.advance();
      continue;
    }
    if (ch == '.' && parts > 0) {
      after_dot = true;
      if (++parts > kMaxKeyParts)
        throw StudyFileError(source + ":" + std::to_string(run_line) + ":" +
                             std::to_string(run_column) + ": a dotted key of more than " +
                             std::to_string(kMaxKeyParts) +
                             " parts; slurmtune refuses it before parsing the file");
      c.advance();
      continue;
    }
    if (ch != ' ' && ch != '\t') {  // anything else ends the run (a newline, =, ], ...)
      parts = 0;
      after_dot = false;
    }
    c.advance();
  }
}

}  // namespace slurmtune::config
