#pragma once
// One trial of `simulate` as the simulator follows it: where it is on its curve, where a
// killed attempt restarts, and PBT's checkpoints (simulation.cpp).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "core/simulation/objective.hpp"

namespace slurmtune::core {

// Reports are counted by index into the trial's curve; `step` is the resource value the
// last one reached (the curve's own steps: recorded tables need not count 1, 2, 3).
struct SimulatedTrial {
  /// A checkpoint: (step, curve, reports done).
  using Checkpoint = std::tuple<double, CurveId, std::uint32_t>;

  CurveId curve = 0;
  std::uint32_t reports = 0;     // reports done so far (kept while paused)
  std::uint32_t judged = 0;      // reports judged: a re-run below it is not judged again
  std::uint32_t checkpoint = 0;  // where a killed attempt restarts (last rung passed, pause)
  double step = 0, checkpoint_step = 0;
  double value = std::numeric_limits<double>::quiet_NaN();  // the last report's
  CurvePoint next;                                          // the report the running step will make
  // PBT: the checkpoints others may clone, newest last.
  std::vector<Checkpoint> kept;
  // PBT: the donor's checkpoint its exploit clones, taken when the exploit was decided
  // (as `run` copies it then): the donor may itself be exploited, and drop its own
  // checkpoints, before this trial resumes.
  std::optional<Checkpoint> clone;

  void save_checkpoint() {
    checkpoint = reports;
    checkpoint_step = step;
  }
  // PBT: a checkpoint the scheduler asked for, which another trial may clone. (It asks
  // at every report that can make a donor, a paused one's included.)
  void keep_checkpoint() {
    save_checkpoint();
    kept.emplace_back(step, curve, reports);
  }
  /// The newest checkpoint kept at `at`, if any.
  std::optional<Checkpoint> kept_at(double at) const {
    const auto found = std::find_if(kept.rbegin(), kept.rend(),
                                    [at](const Checkpoint& k) { return std::get<0>(k) == at; });
    if (found == kept.rend()) return std::nullopt;
    return *found;
  }
};

}  // namespace slurmtune::core
