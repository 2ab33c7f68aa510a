#include "config/table_reader.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "config/study_file.hpp"
#include "core/text.hpp"

namespace slurmtune::config {

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string closest_word(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string hint = closest_word(word, candidates);
  return hint.empty() ? std::string() : "; did you mean '" + hint + "'?";
}

std::string toml_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date/time";
  }
}

TableReader::TableReader(const toml::table& table, std::string name, std::string source)
    : table_(table), name_(std::move(name)), source_(std::move(source)) {}

std::string location(const std::string& source, const toml::source_region& region) {
  return source + ":" + std::to_string(region.begin.line) + ":" +
         std::to_string(region.begin.column);
}

std::string TableReader::where(const toml::node& node) const {
  return location(source_, node.source());
}

void TableReader::fail_at(const toml::node& at, std::string_view key,
                          const std::string& problem) const {
  throw StudyFileError(where(at) + ": [" + name_ + "] " + core::visible(key) + ": " + problem);
}

void TableReader::fail(std::string_view key, const std::string& problem) const {
  // Point at the key when it is there, else at the table that lacks it.
  fail_at(table_.get(key) ? *table_.get(key) : table_, key, problem);
}

bool TableReader::has(std::string_view key) const {
  return table_.contains(key);
}

const toml::node* TableReader::node(std::string_view key) {
  known_.emplace(key);
  return table_.get(key);
}

std::optional<std::string> TableReader::string(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_string()) fail_at(*n, key, "expected a string, found " + toml_type_name(*n));
  return n->value<std::string>();
}

std::optional<std::int64_t> TableReader::integer(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_integer()) fail_at(*n, key, "expected an integer, found " + toml_type_name(*n));
  return n->value<std::int64_t>();
}

std::optional<double> TableReader::number(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_number()) fail_at(*n, key, "expected a number, found " + toml_type_name(*n));
  return n->is_integer() ? static_cast<double>(*n->value<std::int64_t>()) : *n->value<double>();
}

std::optional<bool> TableReader::boolean(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_boolean()) fail_at(*n, key, "expected true or false, found " + toml_type_name(*n));
  return n->value<bool>();
}

std::optional<std::vector<std::string>> TableReader::strings(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  const toml::array* array = n->as_array();
  if (!array) fail_at(*n, key, "expected an array of strings, found " + toml_type_name(*n));
  std::vector<std::string> out;
  for (const auto& element : *array) {
    if (!element.is_string())
      fail_at(element, key, "expected only strings in the array, found " + toml_type_name(element));
    out.push_back(*element.value<std::string>());
  }
  return out;
}

std::optional<std::vector<double>> TableReader::numbers(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  const toml::array* array = n->as_array();
  if (!array) fail_at(*n, key, "expected an array of numbers, found " + toml_type_name(*n));
  std::vector<double> out;
  for (const auto& element : *array) {
    if (!element.is_number())
      fail_at(element, key, "expected only numbers in the array, found " + toml_type_name(element));
    out.push_back(element.is_integer() ? static_cast<double>(*element.value<std::int64_t>())
                                       : *element.value<double>());
  }
  return out;
}

std::optional<std::string> TableReader::keyword(std::string_view key,
                                                const std::vector<std::string_view>& words) {
  auto word = string(key);
  if (!word) return std::nullopt;
  if (std::find(words.begin(), words.end(), *word) != words.end()) return word;
  std::string list;
  for (const auto w : words)
    list += (list.empty() ? "\"" : ", \"") + std::string(w) + "\"";
  fail(key, "\"" + *word + "\" is not one of " + list);
}

void TableReader::finish() const {
  for (const auto& [key, value] : table_) {
    if (known_.contains(key.str())) continue;
    std::vector<std::string> candidates(known_.begin(), known_.end());
    std::string known_list;
    for (const auto& k : known_)
      known_list += (known_list.empty() ? "" : ", ") + k;
    throw StudyFileError(location(source_, key.source()) + ": [" + name_ + "] unknown key '" +
                         std::string(key.str()) + "'" + did_you_mean(key.str(), candidates) +
                         " (known keys here: " + known_list + ")");
  }
}

void read_positive(TableReader& r, std::string_view key, double& into) {
  if (const auto v = r.number(key)) {
    if (!(*v > 0) || !std::isfinite(*v)) r.fail(key, "must be a positive number");
    into = *v;
  }
}

void read_in_range(TableReader& r, std::string_view key, double& into, double low, double high,
                   const std::string& range) {
  if (const auto v = r.number(key)) {
    if (!(*v >= low && *v <= high) || !std::isfinite(*v)) r.fail(key, "must be " + range);
    into = *v;
  }
}

}  // namespace slurmtune::config
