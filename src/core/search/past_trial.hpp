#pragma once
// A trial of an earlier study that a model-based sampler learns from before its first
// suggestion (`[sampler] warm_start`; Optuna's study.add_trials, the observations a
// model is seeded with). The results files are read by store::load_warm_start.
#include <optional>
#include <utility>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/space/search_space.hpp"

namespace slurmtune::core {

struct PastTrial {
  /// In this study's space: a parameter the earlier study lacked (or did not have in
  /// this trial) is inactive.
  Configuration config;
  /// Its reports judged at a rung: (step, value, the rung's resource), in order.
  struct Judged {
    double step = 0, value = 0, milestone = 0;
  };
  std::vector<Judged> judged;
  /// Its last report (step, value), if any: a completed trial's objective value.
  std::optional<std::pair<double, double>> last;
  TrialEnd end = TrialEnd::Completed;
};

}  // namespace slurmtune::core
