#include "core/simulation/curve_csv.hpp"

#include <algorithm>
#include <cmath>
#include <istream>
#include <limits>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/space/param_value.hpp"

namespace slurmtune::core {
namespace {

enum class Role { Parameter, Step, Metric, IgnoredMetric, StepSeconds, Elapsed, Repeat, Status };

struct Column {
  std::string name;
  Role role;
  std::size_t parameter = 0;  // Role::Parameter: index in the search space
};

// Splits one CSV record (RFC 4180 quoting, no newlines inside quotes).
std::vector<std::string> split_record(const std::string& line, const std::string& where) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"' && fields.back().empty()) {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) throw InputError(where + ": a quoted field is not closed");
  return fields;
}

class CsvTableReader {
 public:
  CsvTableReader(const std::string& source, const StudySpec& study)
      : source_(source), study_(study) {}

  CurveTable read(std::istream& in) {
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (number == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // UTF-8 BOM
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      const std::string where = source_ + ":" + std::to_string(number);
      auto fields = split_record(line, where);
      if (!builder_) {
        header_line_ = number;
        read_header(fields, where);
        continue;
      }
      if (fields.size() != columns_.size())
        throw InputError(where + ": " + std::to_string(fields.size()) +
                         " fields, but the header (line " + std::to_string(header_line_) +
                         ") names " + std::to_string(columns_.size()) + " columns");
      read_row(fields, where, "line " + std::to_string(number));
    }
    if (!builder_) throw InputError(source_ + ": empty file; expected a CSV header and rows");
    return builder_->finish();
  }

 private:
  void read_header(const std::vector<std::string>& names, const std::string& where) {
    std::vector<bool> have_parameter(study_.space.size(), false);
    std::optional<CurveTableBuilder::Durations> durations;
    for (const auto& name : names) {
      Column column{name, Role::Parameter, 0};
      if (const auto j = study_.space.index_of(name)) {
        column.parameter = *j;
        have_parameter[*j] = true;
      } else if (name == "step" || name == study_.scheduler.resource) {
        column.role = Role::Step;
      } else if (name == study_.metric) {
        column.role = Role::Metric;
      } else if (std::find(study_.metrics.begin(), study_.metrics.end(), name) !=
                 study_.metrics.end()) {
        column.role = Role::IgnoredMetric;
      } else if (name == "step_seconds" || name == "elapsed_seconds") {
        column.role = name == "step_seconds" ? Role::StepSeconds : Role::Elapsed;
        if (durations)
          throw InputError(where + ": both step_seconds and elapsed_seconds; keep one");
        durations = name == "step_seconds" ? CurveTableBuilder::Durations::PerStep
                                           : CurveTableBuilder::Durations::Cumulative;
      } else if (name == "seed" || name == "repeat") {
        column.role = Role::Repeat;
      } else if (name == "status") {
        column.role = Role::Status;
      } else {
        throw InputError(where + ": column '" + name +
                         "' is neither a [search] parameter, the metric '" + study_.metric +
                         "', one of [study] metrics, nor step, step_seconds, elapsed_seconds, "
                         "seed, repeat or status; add it to [search] (a constant keeps only "
                         "its rows with that value) or to [study] metrics, or drop the column");
      }
      for (const auto& seen : columns_)
        if (seen.role == column.role && column.role != Role::Parameter &&
            column.role != Role::IgnoredMetric)
          throw InputError(where + ": columns '" + seen.name + "' and '" + name +
                           "' play the same role; keep one");
      if (column.role == Role::Parameter)
        for (const auto& seen : columns_)
          if (seen.name == name) throw InputError(where + ": column '" + name + "' appears twice");
      columns_.push_back(column);
    }
    for (std::size_t j = 0; j < have_parameter.size(); ++j)
      if (!have_parameter[j])
        throw InputError(where + ": no column for the [search] parameter '" +
                         study_.space.parameters()[j].name +
                         "'; every parameter needs one (columns: " + join_names(names) +
                         "); rename the column or the parameter");
    require(Role::Step, where, "a 'step' column (or '" + study_.scheduler.resource + "')");
    require(Role::Metric, where, "a column for the metric '" + study_.metric + "'");
    if (!durations)
      throw InputError(where +
                       ": no step_seconds or elapsed_seconds column; the simulation "
                       "needs how long each step took");
    builder_.emplace(source_, study_.space, *durations);
  }

  void require(Role role, const std::string& where, const std::string& what) const {
    for (const auto& c : columns_)
      if (c.role == role) return;
    throw InputError(where + ": the header has no " + what);
  }

  double number_cell(const Column& column, const std::string& text, const std::string& where,
                     bool allow_nan) const {
    const auto x = parse_double(text);
    if (!x)
      throw InputError(where + ": column '" + column.name + "': " +
                       (text.empty() ? std::string("empty") : "'" + text + "' is not a number"));
    if (!allow_nan && std::isnan(*x))
      throw InputError(where + ": column '" + column.name +
                       "': NaN is allowed in metric columns only");
    return *x;
  }

  ParamValue parameter_cell(const Column& column, const std::string& text,
                            const std::string& where) const {
    const Domain& domain = study_.space.parameters()[column.parameter].domain;
    if (auto value = domain.parse(text)) return *value;
    // A listed value the study no longer lists: kept as text, so the configuration is
    // recognised and left out as outside the (narrower) search space.
    if (!domain.is_sampled() || domain.kind == DomainKind::Choice) {
      if (text.empty()) throw InputError(where + ": column '" + column.name + "': empty");
      return text;
    }
    throw InputError(where + ": column '" + column.name + "': '" + text + "' is not " +
                     (domain.is_integer() ? "an integer" : "a finite number") +
                     " (the parameter is " + domain.describe() + ")");
  }

  void read_row(const std::vector<std::string>& fields, const std::string& where,
                const std::string& row) {
    Configuration config;
    config.values.resize(study_.space.size());
    std::string repeat;
    std::optional<TrialEnd> status;
    double step = 0, value = 0, duration = 0;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const Column& c = columns_[i];
      const std::string& text = fields[i];
      switch (c.role) {
        case Role::Parameter:
          config.values[c.parameter] = parameter_cell(c, text, where);
          break;
        case Role::Step:
          step = number_cell(c, text, where, false);
          break;
        case Role::Metric:
          value = number_cell(c, text, where, true);
          break;
        case Role::IgnoredMetric:
          break;
        case Role::StepSeconds:
        case Role::Elapsed:
          duration = number_cell(c, text, where, false);
          break;
        case Role::Repeat:
          repeat = text;
          break;
        case Role::Status:
          status = trial_end_from_string(text);
          if (!status)
            throw InputError(where + ": column 'status': '" + text +
                             "' is not completed, stopped or failed");
          break;
      }
    }
    builder_->add(row, std::move(config), repeat, step, value, duration, status);
  }

  const std::string& source_;
  const StudySpec& study_;
  std::vector<Column> columns_;
  std::size_t header_line_ = 0;
  std::optional<CurveTableBuilder> builder_;
};

}  // namespace

CurveTable read_curve_csv(std::istream& in, const std::string& source, const StudySpec& study) {
  return CsvTableReader(source, study).read(in);
}

}  // namespace slurmtune::core
