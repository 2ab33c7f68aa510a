#pragma once
// Report client for trials run by `slurmtune run`. A trial program reports its metrics
// after each step (epoch, iteration) and learns whether to go on:
//
//   auto client = slurmtune::Client::from_environment();
//   const double lr = client.param<double>("lr");
//   for (int epoch = 1;; ++epoch) {
//     train_one_epoch(lr);
//     const auto decision = client.report(epoch, {{"val_loss", validate()}});
//     if (client.should_checkpoint()) save(client.checkpoint_dir() + "/ckpt.bin"), ...;
//     if (decision != slurmtune::Decision::Continue) break;
//   }
//
// Everything comes from the environment `slurmtune run` sets: SLURMTUNE_ADDR,
// SLURMTUNE_TOKEN_FILE, SLURMTUNE_TRIAL_ID, SLURMTUNE_ATTEMPT. Only trial rank 0 reports; other
// ranks call ask() for the same decision. MPI programs get a collective report, every rank calling
// it, from slurmtune::Trial::from_environment (slurmtune/trial.hpp, library
// slurmtune::trial). Errors throw slurmtune::ClientError.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace slurmtune {

enum class Decision { Continue, Stop, Pause };

/// The coordinator refused a message, or cannot be reached.
class ClientError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The coordinator went away (killed, or its job ended): the trial should exit; a
/// resumed study restarts it from its last checkpoint.
class CoordinatorLost : public ClientError {
 public:
  using ClientError::ClientError;
};

class Client {
 public:
  /// Connects and authenticates from the SLURMTUNE_* environment; the rank comes from
  /// SLURMTUNE_RANK, else the MPI/Slurm rank variables, else 0.
  static Client from_environment();
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();  // says BYE (completed) if finish() was not called

  /// Rank 0: reports `metrics` at `step` and returns the study's decision.
  Decision report(double step, const std::map<std::string, double>& metrics);
  /// Any rank: the trial's current decision (what the last report returned).
  Decision ask();
  /// "Still alive" during a long step, so that [trial] report_timeout_s does not take
  /// the trial for hung; cheap (one small message, no reply).
  void heartbeat();
  /// The last decision asked for a checkpoint (pause, shutdown, or a rung passed).
  bool should_checkpoint() const;
  /// A SIGTERM (scancel, preemption) arrived and the last report turned into Pause with
  /// a checkpoint: save it and exit; the attempt is recorded as interrupted (finish()
  /// says so whatever it is given) and resumes from the checkpoint. The client catches
  /// the first SIGTERM only where its action was the default; a second one terminates.
  bool terminated() const;
  /// Records a checkpoint file (inside checkpoint_dir() or trial_dir()) written at `step`.
  void checkpoint_saved(double step, const std::string& path);
  /// Tells the coordinator how the trial ended; failed trials are retried.
  void finish(bool ok, const std::string& error = {});

  std::uint64_t trial_id() const;
  std::uint64_t attempt() const;
  int rank() const;
  /// The trial's own folder, for logs and checkpoints.
  const std::string& trial_dir() const;
  /// Where checkpoints go: the trial's folder in the study's `[checkpoints] folder` (a
  /// scratch file system), else trial_dir().
  const std::string& checkpoint_dir() const;
  /// Checkpoint to resume from (a retry, a promotion, a resumed study), or "". Under
  /// PBT, after an exploit, this trial's own copy of the donor's checkpoint (and param()
  /// gives the new configuration).
  const std::string& resume_checkpoint() const;
  /// The step that checkpoint was saved at, as indexed; training goes on after it.
  std::optional<double> resume_step() const;
  // ---- trial groups (used by slurmtune::run_trials; see slurmtune/trial.hpp) ----
  /// Connects as the leader of trial group `group` (`ranks` ranks on `nodes`).
  static Client for_group(int group, int ranks, const std::string& nodes);
  /// The group is free: blocks until the coordinator assigns a trial (true) or says the
  /// study is over (false). Afterwards report(), param() and trial_dir() refer to it.
  bool next_trial();
  /// The assigned trial ended (`ok`: it ran its course or was told to stop).
  void end_trial(bool ok, const std::string& error = {});
  /// The raw description (JSON object text: WELCOME of a trial, ASSIGN of a group's
  /// current trial), for broadcasting it to the trial's other ranks.
  const std::string& assignment() const;

  /// A parameter of this trial: double, std::int64_t, bool or std::string; throws
  /// ClientError naming the parameter when it is missing or has another type.
  template <class T>
  T param(const std::string& name) const;
  /// Whether this trial has parameter `name`: a conditional one (`when` in [search])
  /// exists only in the trials its condition holds for.
  bool has_param(const std::string& name) const;

 private:
  struct State;
  explicit Client(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

extern template double Client::param<double>(const std::string&) const;
extern template std::int64_t Client::param<std::int64_t>(const std::string&) const;
extern template bool Client::param<bool>(const std::string&) const;
extern template std::string Client::param<std::string>(const std::string&) const;

}  // namespace slurmtune
