#pragma once
// `slurmtune run`'s decision snapshots (issue #63): the writer hands every row it records
// to a replay of its own (store/decision_replay.hpp) along with the flush that writes
// the row, and every `interval` that replay's state is written into the file in the same
// flush, before its commit row. A snapshot so holds exactly the rows its commit makes
// durable, and a resume starts from it instead of replaying a billion reports.
//
// The rows are collected on the writer's thread and replayed on its flush thread; the
// replay costs what the scheduler and the sampler cost per row (not their suggestions),
// off the coordinator's loop. One snapshot costs writing the state out (milliseconds per
// megabyte) and one write into the file.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/space/search_space.hpp"
#include "store/decision_replay.hpp"

namespace slurmtune::store {

class DecisionSnapshots {
 public:
  struct Started {  // a start's configuration, recorded with its event
    core::TrialId trial;
    core::Configuration config;
  };
  struct Report {  // a /metrics row; its values in Rows::values from `first_value` on
    std::uint64_t seq, trial;
    double step, time;
    std::size_t first_value;
  };
  // A flush's rows, flat: the loop appends a few words per report (no allocation of its
  // own; the vectors keep the last flush's room).
  struct Rows {
    std::vector<Started> started;
    std::vector<EventRecord> events;
    std::vector<Report> reports;
    std::vector<double> values;
  };
  struct Due {  // a snapshot to write
    int slot;
    std::string bytes;
  };

  /// `replay`: the state of the rows before this writer's (a fresh one for a new study);
  /// `session_first_seq`: where this session's rows begin; `slot_in_use`: the slot of the
  /// snapshot the resume started from (-1: none), which the first write leaves alone.
  /// `warn` says, once, why snapshots stopped (the study goes on without them).
  DecisionSnapshots(std::unique_ptr<DecisionReplay> replay, std::size_t metrics,
                    std::uint64_t session_first_seq, double interval_s, int slot_in_use,
                    std::function<void(const std::string&)> warn);

  // The writer's thread.
  void started(core::TrialId trial, const core::Configuration& config);
  void event(const EventRecord& e);
  void report(std::uint64_t seq, core::TrialId trial, double step, double time,
              std::span<const double> values);
  /// The rows since the last call, for the flush that takes them.
  Rows take_rows();
  /// The next flush writes a snapshot whatever the interval (the writer's last).
  void snapshot_next() { forced_ = true; }

  // The flush thread.
  /// Replays `rows`; the snapshot to write with them, when one is due.
  std::optional<Due> replay(const Rows& rows);

 private:
  void replay_in_order(const Rows& rows);

  Rows rows_;             // the writer's thread's
  std::size_t metrics_;   // values per report
  MetricRecord scratch_;  // the flush thread's: one report at a time
  // The flush thread's:
  std::unique_ptr<DecisionReplay> replay_;
  std::vector<core::Configuration> configs_;  // by trial id, as /trials records them
  std::chrono::duration<double> interval_;
  std::chrono::steady_clock::time_point last_;
  int next_slot_;
  std::function<void(const std::string&)> warn_;
  std::atomic<bool> forced_ = false;
};

}  // namespace slurmtune::store
