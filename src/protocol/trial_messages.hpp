#pragma once
// The messages between a trial (its report client, or a trial group's rank 0) and the
// coordinator, as types with one encode and one decode each (see worker_messages.hpp).
// So far: REPORT, CHECKPOINT, and how a trial ended (the payload of BYE and TRIAL_END).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocol/wire/json_value.hpp"

namespace slurmtune::protocol {

/// BYE (a trial) and TRIAL_END (a trial group): {"status": "completed"|"failed", "error"}.
struct TrialEnding {
  bool completed = true;
  std::string error;  ///< the trial's own words when it failed (any text)
  friend bool operator==(const TrialEnding&, const TrialEnding&) = default;
};

/// REPORT: metrics at a step. A value is a number (NaN and infinities included: a
/// diverged loss is a result) or null (absent in this report).
struct Report {
  double step = 0;                                                     ///< finite
  std::vector<std::pair<std::string, std::optional<double>>> metrics;  ///< by name
  /// NaN equals NaN here: a report of a diverged loss is the same report again.
  friend bool operator==(const Report& a, const Report& b);
};

/// CHECKPOINT: a checkpoint file the trial wrote at `step` (confined to the trial's
/// folder by the coordinator, runtime/coordinator/checkpoint_path.hpp).
struct CheckpointSaved {
  double step = 0;   ///< finite
  std::string path;  ///< not empty
  std::uint64_t size = 0;
  friend bool operator==(const CheckpointSaved&, const CheckpointSaved&) = default;
};

/// DECISION, coordinator -> trial: what to do after a REPORT or an ASK.
struct DecisionReply {
  std::string decision;     ///< "continue", "stop" or "pause": what the trial does
  std::string instruction;  ///< the study's word for it ("complete", "suspend", ...): logs
  bool checkpoint = false;  ///< save a checkpoint before going on or leaving
  std::optional<int> rung;
  std::optional<double> cutoff;
  struct Exploit {
    std::uint64_t donor = 0;
    double donor_step = 0;
    friend bool operator==(const Exploit&, const Exploit&) = default;
  };
  std::optional<Exploit> exploit;  ///< PBT: resumes from this donor's checkpoint
  bool duplicate = false;          ///< the report repeated one already recorded
  /// A NaN cutoff (a rung whose values are all NaN) equals NaN here.
  friend bool operator==(const DecisionReply& a, const DecisionReply& b);
};

std::string encode(const TrialEnding& message);
std::string encode(const DecisionReply& message);
DecisionReply decode_decision(const JsonObject& body);
std::string encode(const Report& message);
std::string encode(const CheckpointSaved& message);
Report decode_report(const JsonObject& body);
CheckpointSaved decode_checkpoint(const JsonObject& body);
/// `message`: "BYE" or "TRIAL_END", for the error text. A status other than "completed"
/// or "failed" is refused, not read as a failure.
TrialEnding decode_trial_ending(const JsonObject& body, const char* message);

}  // namespace slurmtune::protocol
