#pragma once
// Discrete-event simulation of a whole study in virtual time: the study's sampler and
// scheduler drive `workers` identical workers against a SyntheticObjective. Nothing
// sleeps and nothing reads a clock, so a million trials take seconds and the same seed
// gives the same run everywhere.
#include <cstdint>
#include <optional>
#include <string>

#include "core/sampler.hpp"
#include "core/scheduler.hpp"
#include "core/study_spec.hpp"

namespace slurmtune::core {

struct SimulationOptions {
  std::size_t workers = 4;
  std::size_t progress_every = 0;  ///< trials between progress callbacks (0: 10 %)
};

struct SimulationProgress {
  double time_s = 0;
  std::uint64_t started = 0;
  std::uint64_t running = 0;
  std::uint64_t paused = 0;
  std::uint64_t completed = 0;
  std::uint64_t stopped = 0;
  std::uint64_t reports = 0;
  std::optional<double> best_value;
};

struct SimulationSummary {
  SimulationProgress final;
  std::optional<TrialId> best_trial;
  double best_step = 0;
  Configuration best_config;
  std::optional<double> time_to_target_s;
  double makespan_s = 0;
  double utilisation = 0;  ///< busy worker-seconds / (workers * makespan)
};

/// Receives every event of a simulation (the study file writer of later modules, tests).
class SimulationObserver {
 public:
  virtual ~SimulationObserver() = default;
  virtual void trial_started(TrialId, const Configuration&, int /*bracket*/, double /*time_s*/) {}
  virtual void trial_resumed(TrialId, double /*time_s*/) {}
  virtual void reported(TrialId, double /*step*/, double /*value*/, const ReportOutcome&,
                        double /*time_s*/) {}
  virtual void trial_ended(TrialId, TrialEnd, double /*time_s*/) {}
  /// No further trial will start (max_trials, budget or threshold reached).
  virtual void admissions_closed(double /*time_s*/) {}
  virtual void progress(const SimulationProgress&) {}
};

/// Runs the study described by `spec`; `observer` may be null.
SimulationSummary simulate_study(const StudySpec& spec, const SimulationOptions& options,
                                 SimulationObserver* observer);

}  // namespace slurmtune::core
