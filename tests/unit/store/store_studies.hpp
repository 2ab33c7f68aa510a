#pragma once
// The studies the results file's tests record: a study of every kind of parameter under
// asha, and a small pbt study (its exploits are what schema 3 added).
#include <string>

#include "config/study_file.hpp"
#include "core/study/study_spec.hpp"

namespace slurmtune::testing {

inline constexpr const char* kStoreStudy = R"(
[study]
name = "store-test"
metric = "loss"
metrics = ["accuracy"]
seed = 3
max_trials = 400
[search]
lr = { loguniform = [1e-4, 1e-1] }
width = { randint = [16, 256] }
opt = { choice = ["sgd", "adam"] }
bn = { choice = [true, false] }
mix = { choice = ["a", 2, 3.5] }
[scheduler]
type = "asha"
grace_period = 1
max_t = 27
reduction_factor = 3
)";

inline constexpr const char* kPbtStoreStudy = R"(
[study]
name = "pbt-store"
metric = "loss"
seed = 5
max_trials = 8
[search]
lr = { loguniform = [1e-4, 1e-1] }
opt = { choice = ["sgd", "adam", "rms"] }
[scheduler]
type = "pbt"
max_t = 24
perturbation_interval = 3
[scheduler.mutations]
lr = "resample"
opt = "resample"
)";

/// The store's study, `extra` appended to its text.
inline core::StudySpec store_study(const std::string& extra = "") {
  return config::parse_study(std::string(kStoreStudy) + extra, "study.toml");
}

inline core::StudySpec pbt_store_study() {
  return config::parse_study(kPbtStoreStudy, "pbt.toml");
}

}  // namespace slurmtune::testing
