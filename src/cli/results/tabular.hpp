#pragma once
// Rows out of a results file as CSV or JSON lines (`slurmtune export`), and the cell
// formatting `status` shares with it.
#include <cstdint>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace slurmtune::cli {

/// One cell: an integer, a real (NaN allowed), text, or nothing (a parameter a trial
/// does not have: empty in CSV, null in JSON).
using Cell = std::variant<std::int64_t, std::uint64_t, double, std::string, std::monostate>;

enum class TableFormat { Csv, JsonLines };

class TableWriter {
 public:
  /// `formula_guard`: CSV text cells (and column names) that a spreadsheet would take
  /// for a formula get a leading ' (numbers are written as they are).
  TableWriter(std::ostream& out, TableFormat format, std::vector<std::string> columns,
              bool formula_guard = false);
  void row(const std::vector<Cell>& cells);

 private:
  std::string csv_text(const std::string& text) const;

  std::ostream& out_;
  TableFormat format_;
  std::vector<std::string> columns_;
  bool formula_guard_;
};

/// A cell as text: reals in shortest round-trip form, NaN as "NaN".
std::string cell_text(const Cell& cell);

}  // namespace slurmtune::cli
