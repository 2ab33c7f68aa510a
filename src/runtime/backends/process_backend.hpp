#pragma once
// A process per trial attempt: a job step (`srun`) inside an allocation, the program
// itself or `mpirun` on a workstation (runtime/launch/launcher.hpp), or a child of the worker
// step on its node (runtime/backends/worker_pool.hpp). Each attempt gets free resources from the
// launcher's ledger and, for distributed trials, a rendezvous port; its exit is
// classified once its last messages have been read.
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "runtime/backends/launch_backend.hpp"
#include "runtime/backends/worker_pool.hpp"
#include "runtime/launch/launch_rate.hpp"
#include "runtime/launch/rendezvous.hpp"
#include "runtime/launch/step_cancels.hpp"
#include "runtime/this_process.hpp"

namespace slurmtune::runtime {

class ProcessBackend final : public LaunchBackend {
 public:
  /// `worker_steps`: a worker step on every node (uses_worker_steps).
  ProcessBackend(const BackendContext& context, bool worker_steps);

  std::string describe() const override;
  void begin() override;
  void fill() override;
  bool done() const override { return done_; }
  bool busy() const override { return !relaunching_.empty(); }
  bool more_to_fill() const override { return more_to_fill_; }
  std::string on_hello(ConnectionId id, const protocol::HelloFrom& hello) override;
  bool owns(ConnectionId id) const override { return workers_.owns(id); }
  bool routes(ConnectionId id) const override { return workers_.owns(id); }
  void check_routed(ConnectionId via, const protocol::HelloFrom& hello) const override {
    workers_.check_routed(via, hello);
  }
  std::optional<Reply> on_message(ConnectionId id, protocol::MessageType type,
                                  const protocol::JsonObject& body) override;
  void on_closed(ConnectionId id, const std::string& reason) override;
  void trial_connection_closed(ActiveTrial& t) override;
  void reap() override;
  void tick(const std::vector<core::TrialId>& due) override;
  void end_attempt(ActiveTrial& t) override;
  void begin_shutdown() override {}
  void stop(bool study_over) override;

 private:
  void start_trial(const core::TrialLaunch& launch, TrialResources placement);
  /// Its process has ended and its messages are read: recorded, resources released.
  void finish(core::TrialId trial);
  /// SIGTERM at terminate_at, SIGKILL a kill grace later.
  void signal_due(ActiveTrial& t, std::chrono::steady_clock::time_point now);
  void warn_of_connection_room() const;
  /// Polls every trial's process: for a child that ended and is not a trial's.
  void reap_every_trial(std::vector<core::TrialId>& ended);

  BackendContext context_;
  const bool worker_steps_;
  RendezvousAssigner rendezvous_;
  bool done_ = false;
  // A launch needs a few descriptors (its credential file, its process's pipes). One a
  // worker step starts opens none of them here: at most a credential file, where its
  // files were not made ahead. The probe is two system calls a descriptor, and with 8 for
  // each of the 40,000 launches of a 60-step study at 16,384 trials it took 4 % of the
  // loop's time.
  static constexpr int kDescriptorsPerLaunch = 8;
  static constexpr int kDescriptorsPerWorkerLaunch = 2;
  DescriptorHeadroom descriptors_;
  bool waiting_for_descriptors_ = false;
  LaunchRate step_rate_;  // job steps a second (--step-launch-rate)
  bool told_step_rate_ = false;
  // A launch asks the sampler for a configuration (MOBSTER: 10-16 ms): 16,384 free slots
  // at the start were minutes of one turn. A turn launches for at most this long, then
  // reads the control plane before it launches more: as long as the loop's own budget
  // for messages (Coordinator::kEventBudget), so a report waits at most about two.
  static constexpr std::chrono::milliseconds kFillBudget{5};
  // While messages wait (the loop's budget ran out with connections left), a turn makes
  // one launch: a decision costs about a tenth of a millisecond and frees a running
  // trial, a launch several times that for one slot, so the cheaper goes first (at
  // 16,384 trials with rungs at the first step, 20 ms of launches a turn against 5 ms
  // of messages made the round trip's p99 2 s).
  static constexpr std::chrono::milliseconds kFillBudgetBehind{0};
  bool more_to_fill_ = false;
  StepCancels step_cancels_;  // before workers_, which kills through it
  WorkerPool workers_;
  std::map<pid_t, core::TrialId> trial_of_child_;  // the local trial processes running
  // Relaunches on their reserved resources, waiting for their files (prepare_relaunch).
  std::map<core::TrialId, std::pair<core::TrialLaunch, TrialResources>> relaunching_;
};

}  // namespace slurmtune::runtime
