#pragma once
// The messages between a trial (its report client, or a trial group's rank 0) and the
// coordinator, as types with one encode and one decode each (see worker_messages.hpp).
// So far: how a trial ended, the payload of BYE and TRIAL_END.
#include <string>

#include "core/json.hpp"

namespace slurmtune::protocol {

/// BYE (a trial) and TRIAL_END (a trial group): {"status": "completed"|"failed", "error"}.
struct TrialEnding {
  bool completed = true;
  std::string error;  ///< the trial's own words when it failed (any text)
  friend bool operator==(const TrialEnding&, const TrialEnding&) = default;
};

std::string encode(const TrialEnding& message);
/// `message`: "BYE" or "TRIAL_END", for the error text. A status other than "completed"
/// or "failed" is refused, not read as a failure.
TrialEnding decode_trial_ending(const core::JsonObject& body, const char* message);

}  // namespace slurmtune::protocol
