#pragma once
// The results file's tables as named columns of cells, shared by `export` and `status`.
#include <string>
#include <vector>

#include "cli/results/tabular.hpp"
#include "store/objective_values.hpp"
#include "store/study_reader.hpp"

namespace slurmtune::cli {

std::vector<std::string> trial_columns(const core::StudySpec& spec);
std::vector<Cell> trial_cells(const store::TrialRecord& t);
/// The columns trial_columns adds after the configuration for a study of several
/// objectives (each one's last value, on the front) or with constraints (feasible).
void append_standing(std::vector<Cell>& cells, const core::StudySpec& spec,
                     const store::TrialStanding& standing, bool on_front);
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

/// The trials that may be named best: those whose constraints hold (all of them in a
/// study without constraints) and, unless `include_failed`, that have not failed (a
/// crashed configuration is never recommended; Optuna too counts only trials that did not
/// fail).
std::vector<store::TrialRecord> best_candidates(const std::vector<store::TrialRecord>& trials,
                                                const std::vector<store::TrialStanding>& standings,
                                                bool include_failed);

/// The trial with the best best_value (NaN ignored, ties to the lower id); nullptr if none.
const store::TrialRecord* best_trial(const std::vector<store::TrialRecord>& trials,
                                     core::Mode mode);

}  // namespace slurmtune::cli
