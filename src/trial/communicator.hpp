#pragma once
// Checked MPI for the trial API. The communicators slurmtune makes (a trial's duplicate,
// the per-trial groups, the node-local ones of placement) return errors to the caller
// (MPI_ERRORS_RETURN) instead of aborting the whole step, and every MPI call's result is
// checked: a failure becomes a ClientError naming the call and MPI's reason, which ends
// the trial (or the group) like a lost coordinator does, with a message instead of an
// abort. MPI_COMM_WORLD keeps the handler its program gave it; calls on it are checked
// too.
#include <mpi.h>

namespace slurmtune::trial {

/// Throws ClientError("<call> failed: <MPI_Error_string>") unless `code` is MPI_SUCCESS.
void mpi_check(int code, const char* call);

/// Owner of one communicator slurmtune made: errors return (MPI_ERRORS_RETURN), freed
/// exactly once (not MPI_COMM_NULL, never after MPI_Finalize).
class Communicator {
 public:
  Communicator() = default;
  /// Takes `comm` (MPI_COMM_NULL: none) and sets MPI_ERRORS_RETURN on it.
  explicit Communicator(MPI_Comm comm);
  /// A private duplicate of `comm` (MPI_Comm_dup), with errors returned.
  static Communicator duplicate(MPI_Comm comm);
  /// MPI_Comm_split of `comm`; MPI_UNDEFINED as `color` gives an empty Communicator.
  static Communicator split(MPI_Comm comm, int color, int key);
  /// The ranks of `comm` that share memory with this one (one node).
  static Communicator node_local(MPI_Comm comm);

  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();

  MPI_Comm get() const { return comm_; }
  bool empty() const { return comm_ == MPI_COMM_NULL; }
  int rank() const;
  int size() const;

 private:
  void free() noexcept;
  MPI_Comm comm_ = MPI_COMM_NULL;
};

/// Checked MPI_Comm_rank / MPI_Comm_size of any communicator.
int rank_of(MPI_Comm comm);
int size_of(MPI_Comm comm);

}  // namespace slurmtune::trial
