#pragma once
// Typed, located access to one TOML table. Every getter marks its key as known; finish()
// rejects the keys nobody asked for, so "unknown key" errors follow the schema the code
// actually reads (a key valid for one scheduler type is unknown for another).
#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace slurmtune::config {

class TableReader {
 public:
  /// `name` is the table's header as the user wrote it ("study", "scheduler").
  TableReader(const toml::table& table, std::string name, std::string source);

  bool has(std::string_view key) const;
  std::optional<std::string> string(std::string_view key);
  std::optional<std::int64_t> integer(std::string_view key);
  std::optional<double> number(std::string_view key);  ///< integer or float
  std::optional<bool> boolean(std::string_view key);
  std::optional<std::vector<std::string>> strings(std::string_view key);
  std::optional<std::vector<double>> numbers(std::string_view key);
  /// One of `words`, or nullopt when absent.
  std::optional<std::string> keyword(std::string_view key,
                                     const std::vector<std::string_view>& words);
  /// The raw node (marks the key known); nullptr when absent.
  const toml::node* node(std::string_view key);

  /// Throws for the first key no getter asked for, with a did-you-mean hint.
  void finish() const;

  /// "FILE:LINE:COL" of a node.
  std::string where(const toml::node& node) const;
  /// Throws StudyFileError "FILE:LINE:COL: [table] key: problem".
  [[noreturn]] void fail(std::string_view key, const std::string& problem) const;
  [[noreturn]] void fail_at(const toml::node& at, std::string_view key,
                            const std::string& problem) const;

  const std::string& name() const { return name_; }
  const std::string& source() const { return source_; }

 private:
  const toml::table& table_;
  std::string name_;
  std::string source_;
  std::set<std::string, std::less<>> known_;
};

/// A finite number > 0 at `key`, when present; otherwise the key fails.
void read_positive(TableReader& r, std::string_view key, double& into);
/// A finite number in [low, high] at `key`, when present; otherwise it fails with
/// "must be <range>".
void read_in_range(TableReader& r, std::string_view key, double& into, double low, double high,
                   const std::string& range);

/// The word in `candidates` closest to `word` (edit distance <= 2), or empty.
std::string closest_word(std::string_view word, const std::vector<std::string>& candidates);
/// "; did you mean 'WORD'?" for closest_word's answer, or "" when there is none.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

/// "SOURCE:LINE:COLUMN" of the start of a region of the study file.
std::string location(const std::string& source, const toml::source_region& region);

/// Describes a TOML node's type as users read it: string, integer, float, boolean, ...
std::string toml_type_name(const toml::node& node);

}  // namespace slurmtune::config
