#pragma once
// [trial] mode = "mpi": one MPI step runs the user's program over the whole allocation
// (layout "split"), or one step per trial's worth of resources (layout "steps");
// slurmtune::run_trials inside it splits the ranks into per-trial groups, and each
// group's rank 0 connects, asks for work (NEXT), gets a trial (ASSIGN), reports like any
// trial, and says how it ended (TRIAL_END). Groups run trials back to back: no process
// start-up between trials. A crashing rank ends its whole step (one MPI_COMM_WORLD): its
// groups' trials fail (and are retried) and the step is relaunched.
#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "runtime/backends/launch_backend.hpp"
#include "runtime/launch/child_process.hpp"

namespace slurmtune::runtime {

class GroupBackend final : public LaunchBackend {
 public:
  explicit GroupBackend(const BackendContext& context);

  std::string describe() const override { return {}; }
  void begin() override {}
  void fill() override;
  bool done() const override { return done_; }
  bool busy() const override { return !steps_.empty(); }
  std::string on_hello(ConnectionId id, const protocol::HelloFrom& hello) override;
  bool owns(ConnectionId id) const override { return groups_.contains(id); }
  std::optional<Reply> on_message(ConnectionId id, protocol::MessageType type,
                                  const protocol::JsonObject& body) override;
  std::optional<core::TrialId> trial_of(ConnectionId id) const override;
  void on_closed(ConnectionId id, const std::string& reason) override;
  void trial_connection_closed(ActiveTrial&) override {}
  void reap() override;
  void tick(const std::vector<core::TrialId>& due) override;
  void end_attempt(ActiveTrial& t) override;
  void begin_shutdown() override;
  void stop(bool) override {}

 private:
  using Clock = std::chrono::steady_clock;
  struct TrialGroup {
    int index = 0, ranks = 0;
    int step = 0;  // the MPI step it belongs to
    std::string nodes;
    std::optional<core::TrialId> trial;  // assigned and not yet ended
    bool waiting = false;                // sent NEXT, no ASSIGN yet
  };
  // One MPI step running trial groups: the whole allocation (layout "split") or one
  // trial's resources (layout "steps", one group per step).
  struct GroupStep {
    ChildProcess process;
    TrialResources placement;  // layout "steps": its resources
    int groups = 0;            // groups that connected from it
    bool failing = false;      // one of its groups vanished: it gets nothing more
    // Terminated for a trial past its limits: SIGKILL at kill_at; its end does not count
    // against --max-step-restarts.
    std::optional<Clock::time_point> kill_at;
    bool ended_for_trial = false;
  };

  std::string trial_shape() const;
  void ensure_steps();
  void launch_step(TrialResources placement);
  void assign(ConnectionId id, TrialGroup& g, const core::TrialLaunch& launch);
  void end_group_trial(TrialGroup& g, bool ok, const std::string& error);
  void step_ended(int number);
  void signal_steps(int signal);
  static std::string group_name(const TrialGroup& g);  // STEP.GROUP, for the log

  BackendContext context_;
  std::map<ConnectionId, TrialGroup> groups_;
  std::map<int, GroupStep> steps_;  // running MPI steps by number (1, 2, ...)
  int step_launches_ = 0, step_restarts_ = 0;
  std::optional<Clock::time_point> step_terminate_at_, step_kill_at_;
  bool done_ = false;
};

}  // namespace slurmtune::runtime
