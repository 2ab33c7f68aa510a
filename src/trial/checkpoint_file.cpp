// Trial::checkpoint / Trial::restore over parallel HDF5 (MPI-IO on the trial's
// communicator). Layout of a checkpoint file: attribute "step"; per sliced dataset
// NAME (all slices concatenated in rank order) and NAME.counts (one slice size per
// rank); per root dataset NAME.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "slurmtune/trial.hpp"
#include "trial/communicator.hpp"

#ifdef SLURMTUNE_HAVE_PARALLEL_HDF5
#include <hdf5.h>
#endif

namespace slurmtune {

#ifdef SLURMTUNE_HAVE_PARALLEL_HDF5
namespace {

// hid_t owner; `close` is the matching H5*close.
class H5Handle {
 public:
  H5Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(id), close_(close) {
    if (id_ < 0) throw ClientError("checkpoint: " + what + " failed");
  }
  ~H5Handle() {
    if (id_ >= 0) close_(id_);
  }
  H5Handle(H5Handle&& other) noexcept : id_(std::exchange(other.id_, -1)), close_(other.close_) {}
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  H5Handle& operator=(H5Handle&&) = delete;
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

H5Handle mpio_access(MPI_Comm comm) {
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate");
  H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL);
  return fapl;
}

H5Handle collective_transfer() {
  H5Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "H5Pcreate");
  H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE);
  return dxpl;
}

// Selects rows [first, first + count) of a file dataspace; returns the matching memory
// dataspace. A rank with no rows still takes part in the collective call (empty selection).
H5Handle select_rows(hid_t space, hsize_t first, hsize_t count) {
  H5Handle memory(H5Screate_simple(1, &count, nullptr), H5Sclose, "H5Screate");
  H5Sselect_hyperslab(space, H5S_SELECT_SET, &first, nullptr, &count, nullptr);
  if (count == 0) {
    H5Sselect_none(space);
    H5Sselect_none(memory.get());
  }
  return memory;
}

// Writes rows [first, first + count) of a 1-D double dataset of `total` rows, every rank
// taking part (count may be 0).
void write_rows(hid_t file, const std::string& name, hsize_t total, hsize_t first,
                std::span<const double> rows) {
  H5Handle space(H5Screate_simple(1, &total, nullptr), H5Sclose, "H5Screate " + name);
  H5Handle set(H5Dcreate2(file, name.c_str(), H5T_NATIVE_DOUBLE, space.get(), H5P_DEFAULT,
                          H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose, "creating dataset " + name);
  const H5Handle memory = select_rows(space.get(), first, rows.size());
  const H5Handle dxpl = collective_transfer();
  if (H5Dwrite(set.get(), H5T_NATIVE_DOUBLE, memory.get(), space.get(), dxpl.get(), rows.data()) <
      0)
    throw ClientError("checkpoint: writing " + name + " failed");
}

std::vector<double> read_rows(hid_t file, const std::string& name, hsize_t first, hsize_t count) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0)
    throw ClientError("checkpoint has no dataset '" + name + "'");
  H5Handle set(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, "opening " + name);
  H5Handle space(H5Dget_space(set.get()), H5Sclose, "H5Dget_space");
  hsize_t total = 0;
  H5Sget_simple_extent_dims(space.get(), &total, nullptr);
  if (count == static_cast<hsize_t>(-1)) count = total - first;
  std::vector<double> rows(count);
  const H5Handle memory = select_rows(space.get(), first, count);
  const H5Handle dxpl = collective_transfer();
  if (H5Dread(set.get(), H5T_NATIVE_DOUBLE, memory.get(), space.get(), dxpl.get(), rows.data()) < 0)
    throw ClientError("checkpoint: reading " + name + " failed");
  return rows;
}

class ParallelWriter final : public CheckpointWriter {
 public:
  ParallelWriter(hid_t file, MPI_Comm comm)
      : file_(file), comm_(comm), rank_(trial::rank_of(comm)), size_(trial::size_of(comm)) {}
  void write_sliced(const std::string& name, std::span<const double> mine) override {
    const double count = static_cast<double>(mine.size());
    std::vector<double> counts(static_cast<std::size_t>(size_));
    trial::mpi_check(MPI_Allgather(&count, 1, MPI_DOUBLE, counts.data(), 1, MPI_DOUBLE, comm_),
                     "MPI_Allgather");
    const auto first =
        static_cast<hsize_t>(std::accumulate(counts.begin(), counts.begin() + rank_, 0.0));
    const auto total = static_cast<hsize_t>(std::accumulate(counts.begin(), counts.end(), 0.0));
    write_rows(file_, name, total, first, mine);
    write_root(name + ".counts", counts);
  }
  void write_root(const std::string& name, std::span<const double> values) override {
    auto n = static_cast<hsize_t>(values.size());
    trial::mpi_check(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm_), "MPI_Bcast");
    write_rows(file_, name, n, 0, rank_ == 0 ? values : std::span<const double>());
  }

 private:
  hid_t file_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

class ParallelReader final : public CheckpointReader {
 public:
  ParallelReader(hid_t file, MPI_Comm comm, double step)
      : file_(file), step_(step), rank_(trial::rank_of(comm)), size_(trial::size_of(comm)) {}
  std::vector<double> read_sliced(const std::string& name) override {
    const auto counts = read_root(name + ".counts");
    if (counts.size() != static_cast<std::size_t>(size_))
      throw ClientError("checkpoint dataset '" + name + "' was written by " +
                        std::to_string(counts.size()) + " rank(s), this trial has " +
                        std::to_string(size_));
    const auto first =
        static_cast<hsize_t>(std::accumulate(counts.begin(), counts.begin() + rank_, 0.0));
    return read_rows(file_, name, first,
                     static_cast<hsize_t>(counts[static_cast<std::size_t>(rank_)]));
  }
  std::vector<double> read_root(const std::string& name) override {
    return read_rows(file_, name, 0, static_cast<hsize_t>(-1));
  }
  double step() const override { return step_; }

 private:
  hid_t file_;
  double step_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

void Trial::checkpoint(double step, const std::function<void(CheckpointWriter&)>& fill) {
  char name[64];
  std::snprintf(name, sizeof name, "/ckpt-%g.h5", step);
  const std::string path = dir_ + name;
  {
    const H5Handle fapl = mpio_access(comm());
    H5Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose,
                  "creating " + path);
    hsize_t one = 1;
    H5Handle scalar(H5Screate_simple(1, &one, nullptr), H5Sclose, "H5Screate");
    H5Handle attr(
        H5Acreate2(file.get(), "step", H5T_NATIVE_DOUBLE, scalar.get(), H5P_DEFAULT, H5P_DEFAULT),
        H5Aclose, "H5Acreate step");
    H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &step);
    ParallelWriter writer(file.get(), comm());
    fill(writer);
  }  // closed (collectively) before the study hears of it
  checkpoint_saved(step, path);
}

bool Trial::restore(const std::function<void(CheckpointReader&)>& read) {
  if (resume_.empty()) return false;
  const H5Handle fapl = mpio_access(comm());
  H5Handle file(H5Fopen(resume_.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose,
                "opening checkpoint " + resume_);
  double step = NAN;
  if (H5Aexists(file.get(), "step") > 0) {
    H5Handle attr(H5Aopen(file.get(), "step", H5P_DEFAULT), H5Aclose, "H5Aopen step");
    H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &step);
  }
  ParallelReader reader(file.get(), comm(), step);
  read(reader);
  return true;
}

#else  // built without parallel HDF5

void Trial::checkpoint(double, const std::function<void(CheckpointWriter&)>&) {
  throw ClientError(
      "Trial::checkpoint needs slurmtune built with parallel HDF5 "
      "(Debian: libhdf5-openmpi-dev); write your own file and call checkpoint_saved");
}

bool Trial::restore(const std::function<void(CheckpointReader&)>&) {
  if (resume_.empty()) return false;
  throw ClientError("Trial::restore needs slurmtune built with parallel HDF5");
}

#endif

}  // namespace slurmtune
