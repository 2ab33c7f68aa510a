#pragma once
// How a worker step starts the trial a LAUNCH names, as a child on its node: the
// coordinator's argv and environment, with what this node adds (its agent's address, the
// task variables of a one-task step, the trial's GPUs among the worker's own).
#include <string>

#include "protocol/worker_messages.hpp"
#include "runtime/launch/child_process.hpp"

namespace slurmtune::runtime {

/// The child's request for `message` on node `node`; `agent_address`: this node's agent
/// ("": none, the trial connects to the coordinator directly). Its credential file is
/// the caller's to add (SLURMTUNE_TOKEN_FILE, AttemptTokens).
SpawnRequest trial_child(const protocol::Launch& message, const std::string& node,
                         const std::string& agent_address);

}  // namespace slurmtune::runtime
