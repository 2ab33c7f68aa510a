#pragma once
// Reading and validating study files (TOML). Every error names the file, the line and
// column, and the key, and says how to fix it; see doc/study-file.md for every key.
#include <map>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/study/study_spec.hpp"

namespace slurmtune::config {

/// A study file is wrong. what() is "FILE:LINE:COL: [table] key: problem; fix".
class StudyFileError : public InputError {
 public:
  using InputError::InputError;
};

/// Reads and validates the study file at `path`.
core::StudySpec load_study_file(const std::string& path);

/// Parses study-file text; `source` names it in error messages.
core::StudySpec parse_study(std::string_view text, const std::string& source);

/// The resolved study (defaults filled in) as TOML, as `slurmtune validate` prints it.
std::string to_toml(const core::StudySpec& study);

/// tpe's `semantics` keyword for its resolved options: "optuna", "binned" or "auto".
std::string_view tpe_semantics(const core::tpe::TpeOptions& options);

/// The resolved `[sampler]` options as a JSON object (`{}` for blind samplers): the
/// results file's root attribute `sampler_options`.
std::string sampler_options_json(const core::StudySpec& study);

/// The resolved study as "table.key" -> TOML text of its value ("search.lr" ->
/// "{ loguniform = [ 0.0001, 0.1 ] }"), for comparing two studies key by key.
std::map<std::string, std::string> flatten_study(const core::StudySpec& study);

}  // namespace slurmtune::config
