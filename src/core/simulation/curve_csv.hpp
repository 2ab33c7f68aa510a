#pragma once
// Recorded learning curves in long-form CSV: one row per (configuration, step).
//   lr,batch_size,optimizer,step,val_loss,step_seconds
//   0.01,64,adam,1,0.93,2.1
// Columns (the header names them; any order):
//   - one per [search] parameter, named as the parameter;
//   - `step`, or the scheduler's resource name (`[scheduler] resource`);
//   - the study's metric; further [study] metrics are allowed and ignored;
//   - `step_seconds` (this step's duration) or `elapsed_seconds` (cumulative);
//   - optional `seed` or `repeat`: several recorded runs of one configuration;
//   - optional `status` (completed | stopped | failed): how the run ended, read from
//     its last step's row (default completed).
// A blank line is skipped; fields may be quoted ("a,b", "" inside quotes).
#include <iosfwd>
#include <string>

#include "core/simulation/curve_table.hpp"
#include "core/study/study_spec.hpp"

namespace slurmtune::core {

/// Reads the table from `in`; every error names `source`, the line and the column.
CurveTable read_curve_csv(std::istream& in, const std::string& source, const StudySpec& study);

}  // namespace slurmtune::core
