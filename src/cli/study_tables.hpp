#pragma once
// The results file's tables as named columns of cells, shared by `export` and `status`.
#include <string>
#include <vector>

#include "cli/tabular.hpp"
#include "store/study_reader.hpp"

namespace slurmtune::cli {

std::vector<std::string> trial_columns(const core::StudySpec& spec);
std::vector<Cell> trial_cells(const store::TrialRecord& t);
std::vector<std::string> metric_columns(const core::StudySpec& spec);
std::vector<Cell> metric_cells(const store::MetricRecord& m);
std::vector<std::string> event_columns();
std::vector<Cell> event_cells(const store::EventRecord& e);
std::vector<std::string> checkpoint_columns();
std::vector<Cell> checkpoint_cells(const store::CheckpointRecord& c);
std::vector<std::string> exploit_columns(const core::StudySpec& spec);
std::vector<Cell> exploit_cells(const store::ExploitRecord& x);

/// The name of an enum value read from a file; "unknown(N)" for a value this version
/// does not know rather than an out-of-range read.
std::string enum_name(const std::vector<std::string>& names, std::size_t value);

/// A parameter value as a cell (numbers stay numbers).
Cell param_cell(const core::ParamValue& value);

/// The trial with the best best_value (NaN ignored, ties to the lower id); nullptr if none.
const store::TrialRecord* best_trial(const std::vector<store::TrialRecord>& trials,
                                     core::Mode mode);

}  // namespace slurmtune::cli
