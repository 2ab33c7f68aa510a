#pragma once
// The trial attempts a session is running and the control-plane connections that speak
// for them: one table that the coordinator and every launch backend read and change,
// so that none of them keeps a copy that could disagree.
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/study/study_spec.hpp"
#include "runtime/attempts/active_trial.hpp"
#include "runtime/attempts/trial_timers.hpp"
#include "runtime/control/control_server.hpp"

namespace slurmtune::runtime {

class TrialTable {
 public:
  using Trials = std::map<core::TrialId, std::unique_ptr<ActiveTrial>>;
  using Clock = std::chrono::steady_clock;

  ActiveTrial& add(std::unique_ptr<ActiveTrial> trial);
  /// The running attempt of `trial`, or nullptr.
  ActiveTrial* find(core::TrialId trial);
  const ActiveTrial* find(core::TrialId trial) const;
  /// Forgets the attempt and every connection bound to it; returns those connections
  /// (still open, perhaps: the caller closes the ones the attempt's own ranks opened).
  std::vector<ConnectionId> erase(core::TrialId trial);
  bool empty() const { return trials_.empty(); }
  std::size_t size() const { return trials_.size(); }
  Trials::iterator begin() { return trials_.begin(); }
  Trials::iterator end() { return trials_.end(); }
  Trials::const_iterator begin() const { return trials_.begin(); }
  Trials::const_iterator end() const { return trials_.end(); }
  /// The first attempt of a trial numbered `trial` or more (for walks in turns).
  Trials::iterator from(core::TrialId trial) { return trials_.lower_bound(trial); }

  /// The connection speaks for `trial` (a rank's HELLO, or a group given the trial).
  void bind(ConnectionId connection, core::TrialId trial);
  /// The attempt `connection` speaks for, or nullptr (never bound, or the trial ended).
  ActiveTrial* of_connection(ConnectionId connection);
  /// Unbinds `connection`; the trial it spoke for, if any.
  std::optional<core::TrialId> unbind(ConnectionId connection);
  /// The connections bound to `trial`, unbound here (to be closed by the caller).
  std::vector<ConnectionId> take_connections(core::TrialId trial);
  /// How many connections are bound to `trial`.
  std::size_t connection_count(core::TrialId trial) const;

  /// Whether an attempt whose process has ended has had its last messages read: true
  /// once its connections have closed, which the kernel does after the data at exit,
  /// or 2 s after the exit was first seen (a process it left behind may hold them open).
  bool messages_drained(ActiveTrial& trial, Clock::time_point now);
  /// Look at `trial` again at `when`: its deadlines (time and silence limits, signals,
  /// the wait for its last messages) are checked then, not by a walk over every trial.
  void wake_at(core::TrialId trial, Clock::time_point when) { timers_.wake_at(trial, when); }
  /// The running attempts with a wake-up due by `now`, each once, ascending.
  std::vector<core::TrialId> take_due(Clock::time_point now);
  /// Wake-ups held, stale ones included (bounded: TrialTimers::compact).
  std::size_t timer_count() const { return timers_.size(); }
  /// Each running attempt's seconds since its last sign of life, for the progress line.
  std::vector<std::pair<core::TrialId, double>> quiet_times(Clock::time_point now) const;

 private:
  Trials trials_;  // in order, for walks
  // Every message looks up its connection's trial and the trial's attempt: a table by
  // trial id (8 bytes a trial) and a hash map, as a tree walk each (16,384 trials) was a
  // tenth of the loop's time at a rung crossing.
  std::deque<ActiveTrial*> index_;  // trials_ by id; nullptr where none runs
  std::unordered_map<ConnectionId, core::TrialId> connections_;
  // ... and the other way: a HELLO, an exit and an end look up one trial's connections
  // without a walk over every connection (16,384 trials made that walk most of the
  // coordinator's work, issue #62).
  std::unordered_map<core::TrialId, std::set<ConnectionId>> by_trial_;
  TrialTimers timers_;
};

}  // namespace slurmtune::runtime
