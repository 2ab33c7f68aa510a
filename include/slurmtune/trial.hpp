#pragma once
// The MPI trial API. A user's program is an ordinary MPI executable:
//
//   void train(slurmtune::Trial& t) {
//     const double lr = t.param<double>("lr");
//     for (int epoch = 1;; ++epoch) {
//       ... train on t.comm() (your trial's ranks only) ...
//       if (t.report(epoch, {{"val_loss", loss}}) != slurmtune::Decision::Continue) return;
//     }
//   }
//   int main(int argc, char** argv) { return slurmtune::run_trials(argc, argv, train); }
//
// `slurmtune run` with [trial] mode = "mpi" launches it as one step over the allocation.
// run_trials learns each rank's placement (PMIx, else MPI_Comm_split_type), splits the
// ranks into per-trial groups (core::partition_ranks), and each group runs trial after
// trial: its rank 0 asks the coordinator for the next one and broadcasts it.
//
// An MPI program run as an ordinary multi-rank trial ([trial] command, ntasks > 1) gets
// the same collective report without run_trials:
//
//   MPI_Init(&argc, &argv);
//   { auto t = slurmtune::Trial::from_environment(MPI_COMM_WORLD);
//     train(*t); }   // every rank calls t->report(...) and gets the same decision
//   MPI_Finalize();
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "slurmtune/checkpoint.hpp"
#include "slurmtune/client.hpp"

namespace slurmtune {

namespace trial {
class Communicator;  // the owner of the trial's communicator (src/trial/communicator.hpp)
}

class Trial {
 public:
  /// The trial's own communicator: a private duplicate made for this trial, never
  /// MPI_COMM_WORLD; freed when the trial ends. Its errors return to the caller
  /// (MPI_ERRORS_RETURN): slurmtune's own calls on it throw ClientError, and your calls
  /// on it return the error code instead of aborting the step.
  MPI_Comm comm() const;
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Rank among this trial's ranks on the same node (GPU pinning).
  int local_rank() const { return local_rank_; }
  /// Host names of the trial's nodes, in rank order.
  const std::vector<std::string>& nodes() const { return nodes_; }
  std::uint64_t id() const { return id_; }
  std::uint64_t attempt() const { return attempt_; }

  /// A parameter: double, std::int64_t, bool or std::string; throws ClientError naming
  /// the parameter when it is missing or has another type. Same value on every rank.
  template <class T>
  T param(const std::string& name) const;
  /// Whether this trial has parameter `name` (a conditional one exists only in the trials
  /// its `when` holds for). Same answer on every rank.
  bool has_param(const std::string& name) const;

  /// Collective over comm(): rank 0 reports `metrics` (pass the same values on every
  /// rank, e.g. after an allreduce) and every rank returns the same decision.
  Decision report(double step, const std::map<std::string, double>& metrics);
  /// The last decision asked for a checkpoint (pause, shutdown, a rung passed).
  bool should_checkpoint() const { return checkpoint_wanted_; }
  /// "Still alive" in a long step ([trial] report_timeout_s); not collective: rank 0
  /// sends it, other ranks return at once.
  void heartbeat();
  /// Where its checkpoints go: its folder in the study's `[checkpoints] folder` (a scratch
  /// file system), else the trial's own folder; the same path on every rank.
  const std::string& checkpoint_dir() const { return dir_; }
  /// Checkpoint to restore (a retry, a promotion, a resumed study), or "".
  const std::string& resume_checkpoint() const { return resume_; }
  /// The step resume_checkpoint() was saved at, as indexed (NaN when there is none).
  double resume_step() const { return resume_step_; }
  /// The last report noticed a SIGTERM (scancel, preemption) on rank 0 and turned into
  /// Pause with a checkpoint: save it and end; the attempt resumes from it. Only trials
  /// from from_environment(): trial groups keep SIGTERM's default action.
  bool terminated() const { return terminated_; }
  /// Collective: records a checkpoint file written at `step` (rank 0 tells the study).
  void checkpoint_saved(double step, const std::string& path);
  /// Collective: writes `<checkpoint_dir()>/ckpt-<step>.h5` with parallel HDF5 over comm()
  /// through `fill`, then records it. Throws ClientError when built without parallel HDF5.
  void checkpoint(double step, const std::function<void(CheckpointWriter&)>& fill);
  /// Collective: reads resume_checkpoint() through `read`; false (and `read` not called)
  /// when there is none (a fresh trial).
  bool restore(const std::function<void(CheckpointReader&)>& read);

  /// Collective: an NCCL communicator over comm() (unique id from trial rank 0, broadcast,
  /// ncclCommInitRank), each rank on GPU device_for(local_rank); cast to ncclComm_t.
  /// nullptr, with one line on stderr saying why, when slurmtune was built without
  /// CUDA (-DSLURMTUNE_ENABLE_CUDA=ON) or a rank sees no GPU: use the MPI collectives.
  void* nccl_comm();

  /// Collective over `comm`, the trial's ranks (all ranks of an ordinary multi-rank
  /// trial: MPI_COMM_WORLD): rank 0 connects to the coordinator from the SLURMTUNE_*
  /// environment and the trial's description reaches every rank. When the Trial is
  /// destroyed rank 0 says the trial completed, or failed if an exception is unwinding.
  /// Ranks other than 0 defer a first SIGTERM to the next report (see terminated()).
  /// Throws ClientError on every rank when rank 0 cannot connect.
  static std::unique_ptr<Trial> from_environment(MPI_Comm comm = MPI_COMM_WORLD);

  Trial(const Trial&) = delete;
  Trial& operator=(const Trial&) = delete;
  ~Trial();

 private:
  friend class TrialGroupRunner;
  Trial(MPI_Comm group, const std::string& assignment, Client* leader, int local_rank,
        std::vector<std::string> nodes);

  std::unique_ptr<trial::Communicator> comm_;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
  std::vector<std::string> nodes_;
  std::uint64_t id_ = 0, attempt_ = 0;
  std::string dir_, resume_;
  double resume_step_ = 0;
  std::shared_ptr<const void> params_;  // protocol::JsonObject, kept out of this header
  Client* leader_;                      // rank 0 only
  std::unique_ptr<Client> own_leader_;  // from_environment(): rank 0's connection
  int exceptions_at_start_ = 0;         // std::uncaught_exceptions() when made
  bool checkpoint_wanted_ = false, terminated_ = false;
  std::shared_ptr<void> nccl_;  // the NCCL communicator once made (destroyed with the trial)
  bool nccl_tried_ = false;
};

using TrainFunction = std::function<void(Trial&)>;

/// Runs trials until the study is over; returns the process exit status. Initialises
/// and finalises MPI unless the caller already did. A `train` that throws ends its trial
/// as failed (retried per the study's max_failures) and the group goes on; it must
/// throw on every rank of the trial (e.g. after a collective), or the others wait.
int run_trials(int argc, char** argv, const TrainFunction& train);

extern template double Trial::param<double>(const std::string&) const;
extern template std::int64_t Trial::param<std::int64_t>(const std::string&) const;
extern template bool Trial::param<bool>(const std::string&) const;
extern template std::string Trial::param<std::string>(const std::string&) const;

}  // namespace slurmtune
