#pragma once
// What the simulated trials of `slurmtune simulate` are: which configuration a new trial
// gets and what it reports after each step, and how long each step takes. Two kinds: a
// synthetic formula (synthetic_objective.hpp) and recorded learning curves
// (recorded_objective.hpp).
#include <cstdint>
#include <memory>
#include <optional>

#include "core/schedulers/scheduler.hpp"
#include "core/search/suggester.hpp"
#include "core/simulation/curve_table.hpp"
#include "core/space/search_space.hpp"

namespace slurmtune::core {

/// Identifies the curve a simulated trial follows (the objective's own numbering).
using CurveId = std::uint64_t;

class Objective {
 public:
  virtual ~Objective() = default;
  /// The curve new trial `trial` follows (trials are drawn in id order), given the
  /// sampler's suggestion for it; nullopt once no configuration is left to draw.
  virtual std::optional<CurveId> draw(TrialId trial, const Suggestion& suggestion) = 0;
  virtual Configuration configuration(CurveId curve) const = 0;
  /// The trial's report number `index` (0: after its first step); nullopt where the
  /// curve ends (a recorded run that was stopped there, or a table's last step).
  virtual std::optional<CurvePoint> report(CurveId curve, TrialId trial,
                                           std::uint32_t index) const = 0;
  /// How the run of `curve` ended after its last report.
  virtual TrialEnd recorded_end(CurveId /*curve*/) const { return TrialEnd::Completed; }
  /// How many trials it can start at most.
  virtual std::uint64_t capacity() const = 0;
  /// PBT: the curve trial `trial` follows from now on, having taken over the state of
  /// `from` after its report `index` and changed its configuration to `config`; nullopt
  /// where the objective has no such curve (a recorded table holds whole runs only).
  virtual std::optional<CurveId> continue_from(CurveId /*from*/, std::uint32_t /*index*/,
                                               TrialId /*trial*/, const Configuration& /*config*/) {
    return std::nullopt;
  }
};

}  // namespace slurmtune::core
