#pragma once
// `slurmtune export STUDY.h5 --format tensorboard -o DIR`: the study as TensorBoard
// logs: DIR/ holds the experiment (the search space as HParams hyperparameters, the
// study's metrics) and DIR/trial-<id>/ one run per trial with its metrics as scalars and
// its HParams session (configuration, start, end and outcome).
#include <cstdint>
#include <string>

#include "store/study_reader.hpp"

namespace slurmtune::cli {

struct TensorboardExport {
  std::uint64_t runs = 0, scalars = 0;
};

/// Writes the logs into `dir`, which must not exist or be empty (nothing is overwritten).
TensorboardExport export_tensorboard(const store::StudyReader& reader, const std::string& dir);

}  // namespace slurmtune::cli
