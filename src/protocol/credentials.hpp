#pragma once
// Credentials of the control plane (doc/protocol.md#credentials): each holder speaks only
// for itself. A trial's attempt, a trial group's MPI step and a worker step each get
// their own credential, an HMAC-SHA-256 of the session's secret over what the holder is,
// handed to that holder only; the coordinator derives the one a HELLO's claim needs and
// compares. Only the coordinator and the workers of joined jobs (the user's own
// `slurmtune join`, which must find a session it did not start) hold the secret itself.
// A worker derives the credentials of the attempts it starts from its own (the same
// HMAC, keyed with the worker's credential), so that no launch makes a file on the
// study's file system; the coordinator accepts such a credential only for an attempt it
// placed on that worker's node.
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/session_messages.hpp"

namespace slurmtune::protocol {

/// HMAC(secret, "slurmtune credential\nattempt\n<trial>\n<attempt>\n<launch>"), 64 hex
/// digits: the credential of every rank of one launch of one attempt of one trial. The
/// launch number grows at every start, resume, promotion, exploit, retry and restart of a
/// session, so a process left over from a paused run cannot speak for the run resumed
/// after it (the attempt counts failures only: both share it).
std::string attempt_credential(std::string_view secret, core::TrialId trial, std::uint64_t attempt,
                               std::uint64_t launch);
/// HMAC(secret, "slurmtune credential\nstep\n<step>"): a trial group's MPI step.
std::string group_step_credential(std::string_view secret, int step);
/// HMAC(secret, "slurmtune credential\nworker\n<node>"): the worker step on `node`.
std::string worker_credential(std::string_view secret, std::string_view node);

/// What a trial HELLO's credential must cover: the trial's running launch, and who
/// derived the credential: the coordinator from the secret (the file it wrote, or a
/// joined job's worker, which holds the secret), or the worker step of node `host` from
/// its own credential (attempt_credential(worker_credential(secret, host), ...)).
struct AttemptGrant {
  std::uint64_t launch = 0;  ///< 0: the trial is not running
  std::string host;          ///< "": derived from the secret
};

/// The credential that covers what `from` claims: the attempt's running launch for a
/// trial's rank (under `grant`), the step's for a group, the node's for a worker step,
/// and the secret itself for the worker of a joined job.
std::string credential_for(std::string_view secret, const HelloFrom& from,
                           const AttemptGrant& grant);

/// What `from` claims, for a refusal: "trial 3, attempt 0", "group step 2", "worker n3",
/// "joined worker n4 of job 77".
std::string claim_of(const HelloFrom& from);

}  // namespace slurmtune::protocol
