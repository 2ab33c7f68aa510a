#include "cli/results/tabular.hpp"

#include "cli/results/quoting.hpp"
#include "core/number_text.hpp"
#include "core/replay/replay.hpp"

namespace slurmtune::cli {
namespace {
std::string csv_quote(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}
}  // namespace

std::string cell_text(const Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (const auto* u = std::get_if<std::uint64_t>(&cell)) return std::to_string(*u);
  if (const auto* d = std::get_if<double>(&cell)) return core::json_number(*d);
  if (std::holds_alternative<std::monostate>(cell)) return {};
  return std::get<std::string>(cell);
}

TableWriter::TableWriter(std::ostream& out, TableFormat format, std::vector<std::string> columns,
                         bool formula_guard)
    : out_(out), format_(format), columns_(std::move(columns)), formula_guard_(formula_guard) {
  if (format_ != TableFormat::Csv) return;
  for (std::size_t i = 0; i < columns_.size(); ++i)
    out_ << (i ? "," : "") << csv_text(columns_[i]);
  out_ << '\n';
}

std::string TableWriter::csv_text(const std::string& text) const {
  return csv_quote(formula_guard_ ? formula_guarded(text) : text);
}

void TableWriter::row(const std::vector<Cell>& cells) {
  if (format_ == TableFormat::Csv) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const auto* text = std::get_if<std::string>(&cells[i]);
      out_ << (i ? "," : "") << (text ? csv_text(*text) : csv_quote(cell_text(cells[i])));
    }
    out_ << '\n';
    return;
  }
  out_ << '{';
  for (std::size_t i = 0; i < cells.size() && i < columns_.size(); ++i) {
    out_ << (i ? "," : "") << core::json_quote(columns_[i]) << ':';
    if (const auto* s = std::get_if<std::string>(&cells[i]))
      out_ << core::json_quote(*s);
    else if (std::holds_alternative<std::monostate>(cells[i]))
      out_ << "null";
    else
      out_ << cell_text(cells[i]);
  }
  out_ << "}\n";
}

}  // namespace slurmtune::cli
