#pragma once
// What the launch-backend tests share (test_process_backend.cpp, test_worker_pool.cpp):
// a study of one real parameter under FIFO whose trials run `command` (a TOML array),
// and a study controller of it that records nothing (no results file).
#include <string>

#include "config/study_file.hpp"
#include "core/schedulers/scheduler_spec.hpp"
#include "core/search/suggester.hpp"
#include "core/study/study_controller.hpp"

namespace slurmtune::testing {

inline core::StudySpec fifo_study(const std::string& name, int max_trials,
                                  const std::string& command) {
  return config::parse_study(
      "[study]\nname = \"" + name +
          "\"\nmetric = \"loss\"\nmode = \"min\"\nmax_trials = " + std::to_string(max_trials) +
          "\n[search]\nx = { uniform = [0, 1] }\n[scheduler]\ntype = "
          "\"fifo\"\n[trial]\ncommand = " +
          command + "\n",
      name + ".toml");
}

/// The study controller of `spec`, as the coordinator makes it, minus the results file.
class QuietController {
 public:
  explicit QuietController(const core::StudySpec& spec)
      : controller(spec, core::make_scheduler(spec.scheduler, spec.mode, spec.seed, spec.name),
                   core::make_suggester(spec.space, spec.sampler, false, spec.seed), observer_,
                   nullptr) {}

 private:
  struct Quiet final : core::StudyObserver {};
  Quiet observer_;  // before `controller`, which keeps a reference to it

 public:
  core::StudyController controller;
};

}  // namespace slurmtune::testing
