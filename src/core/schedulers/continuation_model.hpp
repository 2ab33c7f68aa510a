#pragma once
// What a scheduler that lets a model choose the next job (freeze_thaw) asks the model:
// how much it expects from continuing each paused trial to its next rung, and from
// starting the configuration it would propose for the next trial. Kept apart from any
// one surrogate so a better curve model can answer instead of MOBSTER's GP.
#include <optional>
#include <utility>
#include <vector>

#include "core/schedulers/scheduler.hpp"

namespace slurmtune::core {

/// A paused trial and the resource of the rung it would continue to.
struct ContinuationQuery {
  TrialId trial = 0;
  double resource = 0;
};

/// The model's expectation of one job: expected improvement over the incumbent at the
/// job's resource (in the model's standardised units: comparable between jobs of one
/// call only) and the predicted value there (user units, 10-90 % interval).
struct JobExpectation {
  double improvement = 0;
  PredictedFinal value;
  /// Seconds per unit of resource of the job's configuration (measured for a trial that
  /// ran, predicted otherwise): nullopt while the model cannot tell.
  std::optional<double> seconds;
};

struct ContinuationScores {
  JobExpectation start;                 ///< the next trial's proposal at the first rung
  std::vector<JobExpectation> resumes;  ///< one per query, in order
};

class ContinuationModel {
 public:
  virtual ~ContinuationModel() = default;
  /// nullopt while the model has too little data to tell. `next_trial` is the id a start
  /// would get; `first_resource` the first rung. Deterministic in the events seen so far.
  virtual std::optional<ContinuationScores> score_jobs(
      TrialId next_trial, double first_resource, const std::vector<ContinuationQuery>& paused) = 0;
};

}  // namespace slurmtune::core
