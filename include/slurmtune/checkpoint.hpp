#pragma once
// Collective per-trial checkpoints in HDF5 over MPI-IO (parallel HDF5), for trials run by
// slurmtune::run_trials. One file per checkpoint, `<trial dir>/ckpt-<step>.h5`, written
// by all of the trial's ranks at once and indexed in the results file:
//
//   t.checkpoint(epoch, [&](slurmtune::CheckpointWriter& w) {
//     w.write_sliced("weights", my_shard);   // each rank its slice of one dataset
//     w.write_root("optimizer", state);      // small state: trial rank 0's values
//   });
//   ...
//   t.restore([&](slurmtune::CheckpointReader& r) {   // false when there is none
//     my_shard = r.read_sliced("weights");
//     state = r.read_root("optimizer");
//   });
//
// Available when slurmtune was built with parallel HDF5 (SLURMTUNE_HAVE_PARALLEL_HDF5).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace slurmtune {

class CheckpointWriter {
 public:
  virtual ~CheckpointWriter() = default;
  /// Collective: a 1-D dataset of doubles, each rank contributing `mine` in rank order
  /// (slices may differ in size; the sizes are stored so a restore hands each rank its own).
  virtual void write_sliced(const std::string& name, std::span<const double> mine) = 0;
  /// Collective: a dataset holding trial rank 0's `values` (other ranks' are ignored).
  virtual void write_root(const std::string& name, std::span<const double> values) = 0;
};

class CheckpointReader {
 public:
  virtual ~CheckpointReader() = default;
  /// Collective: this rank's slice, as written by the rank of the same number; throws
  /// ClientError naming the dataset when it is missing or the trial size changed.
  virtual std::vector<double> read_sliced(const std::string& name) = 0;
  /// Collective: the whole dataset, on every rank.
  virtual std::vector<double> read_root(const std::string& name) = 0;
  /// The step the checkpoint was written at.
  virtual double step() const = 0;
};

}  // namespace slurmtune
