#pragma once
// StudyWriter's HDF5 objects, for its own .cpp files alone: kept out of
// study_writer.hpp so that its includers (the coordinator, `simulate`) do not see
// <hdf5.h>.
#include <memory>
#include <utility>

#include "store/file/curve_samples.hpp"
#include "store/file/hdf5.hpp"
#include "store/file/tables.hpp"
#include "store/study_writer.hpp"

namespace slurmtune::store {

struct StudyWriter::Hdf5Objects {
  explicit Hdf5Objects(Hid f) : file(std::move(f)) {}
  Hid file, commit;
  std::unique_ptr<UpdateTable> trials;
  std::unique_ptr<AppendTable> metrics, events, checkpoints, sessions;
  std::unique_ptr<AppendTable> exploits;      // schema 3 on
  std::unique_ptr<AppendTable> removals;      // schema 10 on: /removed_checkpoints
  std::unique_ptr<CurveSamples> curves;       // schema 11 on
  std::unique_ptr<AppendTable> improvements;  // schema 11 on
};

}  // namespace slurmtune::store
