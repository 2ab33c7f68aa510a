#pragma once
// Whether a study fits the results file before anything is written: every table's row is
// one HDF5 compound type, whose description (a member per parameter, metric and
// constraint, with its name) must fit the dataset's object header. A study past it (some
// 1,900 parameters with short names, fewer with long ones or with many choice values) is
// refused by `validate` and `run` with the numbers, not with an HDF5 stack at the first
// write.
#include "core/study/study_spec.hpp"

namespace slurmtune::store {

/// Throws InputError naming the study file, the table and the sizes when a row type of
/// `spec`'s results file would not fit (with a margin: HDF5 1.10 refused 1,900 short
/// parameters; this refuses from about 1,780).
void check_results_file_capacity(const core::StudySpec& spec);

}  // namespace slurmtune::store
