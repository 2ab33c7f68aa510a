#pragma once
// What kept the coordinator's one loop from waiting, and the figures of it a results
// file's commit records (issue #62): a value type the coordinator fills
// (runtime/control/loop_stalls.hpp) and the store writes and reads.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace slurmtune::core {

/// What kept the coordinator's loop from waiting (the results file's /commit `loop_*_work`).
enum class LoopWork : std::uint8_t {
  Messages,     ///< control traffic: reading, checking and answering messages
  Decisions,    ///< the scheduler and the searcher taking in a report
  Suggestions,  ///< the searcher proposing configurations
  Launches,     ///< starting trials and workers
  Exits,        ///< children that ended: reaping them and ending their trials
  Results,      ///< the results file, on the loop (buffering, taking a flush, explicit flushes)
  Checkpoints,  ///< PBT's checkpoint copies
  Periodic,     ///< timeouts, limits, stderr caps, progress
};
inline constexpr std::size_t kLoopWorkKinds = 8;
/// The names of LoopWork in its order (the results file's enum; a new kind goes last).
inline const std::vector<std::string>& loop_work_names() {
  static const std::vector<std::string> names = {"messages",    "decisions", "suggestions",
                                                 "launches",    "exits",     "results",
                                                 "checkpoints", "periodic"};
  return names;
}

/// The coordinator loop's figures a commit records (schema 9 on): its longest turn of
/// about the last minute and what filled it, how busy it was then, and the session's.
struct LoopFigures {
  double recent_longest_ms = 0;
  LoopWork recent_work = LoopWork::Messages;
  double recent_busy = 0;  ///< share of the recent window spent working, 0 to 1
  double longest_ms = 0;
  LoopWork longest_work = LoopWork::Messages;
  std::uint64_t turns = 0, over_10ms = 0, over_100ms = 0, over_1s = 0;
};

}  // namespace slurmtune::core
