#pragma once
// Helpers shared by the scheduler tests.
#include <memory>
#include <ostream>

#include "core/schedulers/scheduler_spec.hpp"

namespace slurmtune::core {
// Lets Boost.Test print decisions in failure messages.
inline std::ostream& operator<<(std::ostream& out, SchedulerDecision d) {
  return out << to_string(d);
}
}  // namespace slurmtune::core

namespace slurmtune::core::testing {

inline SchedulerSpec spec(SchedulerType type, double grace, double rf, double max_t) {
  SchedulerSpec s;
  s.type = type;
  s.grace_period = grace;
  s.reduction_factor = rf;
  s.max_t = max_t;
  return s;
}

/// Starts trial `t` and reports one value; returns the outcome.
inline ReportOutcome start_and_report(Scheduler& s, TrialId t, double step, double value) {
  s.add_trial(t, std::nullopt);
  return s.report(t, step, value);
}

}  // namespace slurmtune::core::testing
