#pragma once
// The messages that open a connection and hand out trials (doc/protocol.md): HELLO in
// its four kinds (a trial's rank, a trial group, a worker step, a joined job's worker),
// WELCOME, a group's NEXT and ASSIGN, and the empty ASK and HEARTBEAT; as types with one
// encode and one decode each (see worker_messages.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "core/trial_id.hpp"
#include "protocol/wire/json_value.hpp"
#include "protocol/worker_messages.hpp"

namespace slurmtune::protocol {

/// HELLO of one rank of a trial: which trial and attempt (its credential covers both),
/// and which rank (only rank 0 reports).
struct TrialHello {
  core::TrialId trial = 0;    ///< 0 to 2^53
  std::uint64_t attempt = 0;  ///< 0 to 2^53
  std::int64_t rank = 0;      ///< 0 to 2^24
  std::string slurm_step;     ///< "JOBID.STEPID" when the trial runs in a job step, else ""
  friend bool operator==(const TrialHello&, const TrialHello&) = default;
};

/// HELLO of a trial group's rank 0 ([trial] mode = "mpi").
struct GroupHello {
  int group = 0;      ///< 0 to 2^24
  int ranks = 1;      ///< 1 to 2^24
  int step = 0;       ///< the coordinator's MPI step it belongs to, 0 to 2^24
  std::string nodes;  ///< its hostlist, for the log
  friend bool operator==(const GroupHello&, const GroupHello&) = default;
};

/// HELLO of the worker step the coordinator started on `node` ([resources] launch =
/// "worker").
struct WorkerHello {
  std::string node;  ///< not empty
  std::string slurm_step;
  friend bool operator==(const WorkerHello&, const WorkerHello&) = default;
};

/// HELLO of the worker of a job that joined the study (`slurmtune join`).
struct JoinedHello {
  std::string node, allocation;  ///< its node and its job's id, not empty
  std::string slurm_step;
  std::int64_t cpus = 1;              ///< 1 to 2^24
  std::int64_t gpus = 0;              ///< 0 to 2^24
  std::optional<double> time_left_s;  ///< finite; absent when the job has no limit
  friend bool operator==(const JoinedHello&, const JoinedHello&) = default;
};

using HelloFrom = std::variant<TrialHello, GroupHello, WorkerHello, JoinedHello>;

/// HELLO: who connects, and its credential (protocol/credentials.hpp: the attempt's, the
/// group step's), or the nonce that opens mutual authentication (workers, which never
/// send theirs).
struct Hello {
  std::string token;      ///< "" when `challenge` is given
  std::string challenge;  ///< 32 to 128 characters, or ""
  HelloFrom from;
  friend bool operator==(const Hello&, const Hello&) = default;
};

/// WELCOME of a trial, and ASSIGN to a trial group: the trial to run.
struct TrialAssignment {
  core::TrialId trial = 0;  ///< 0 to 2^53
  std::uint64_t attempt = 0;
  /// The trial's parameters: a JSON object's text, as the study's search space writes it
  /// (its declared order); a decode keeps the object it read, written out again.
  std::string params = "{}";
  std::string trial_dir;  ///< not empty
  /// Where its checkpoints go, when not `trial_dir` (`[checkpoints] folder`); "": there.
  std::string checkpoint_dir;
  std::string checkpoint;                 ///< where to resume from; "" (null) when none
  std::optional<double> checkpoint_step;  ///< the step `checkpoint` was saved at; finite
  std::string metric;                     ///< WELCOME: the scheduled metric; ASSIGN: ""
  /// The parameters as an object.
  JsonObject params_object() const;
  /// Where the trial keeps its checkpoints: checkpoint_dir, else trial_dir.
  const std::string& checkpoint_folder() const {
    return checkpoint_dir.empty() ? trial_dir : checkpoint_dir;
  }
  friend bool operator==(const TrialAssignment&, const TrialAssignment&) = default;
};

/// WELCOME of a trial group.
struct GroupWelcome {
  int group = 0;
  friend bool operator==(const GroupWelcome&, const GroupWelcome&) = default;
};

/// WELCOME of a worker: its node, and its job's id when it joined.
struct WorkerWelcome {
  std::string node;
  std::string allocation;  ///< "" for a worker step of the study's own job
  /// [checkpoints] node_local: the folder on the node's own disk ("{node}" not replaced)
  /// that the worker claims for `study` (the results file) and serves; else both empty.
  std::string checkpoint_folder = {};
  std::string study = {};
  friend bool operator==(const WorkerWelcome&, const WorkerWelcome&) = default;
};

/// ASSIGN: the group's next trial, or the end of the study.
using Assignment = std::variant<TrialAssignment, StudyOver>;

/// NEXT (a group is free), ASK (the latest decision, for ranks that do not report) and
/// HEARTBEAT (alive in a long step): `{}`. Fields they may carry are ignored.
struct Next {
  friend bool operator==(const Next&, const Next&) = default;
};
struct Ask {
  friend bool operator==(const Ask&, const Ask&) = default;
};
struct Heartbeat {
  friend bool operator==(const Heartbeat&, const Heartbeat&) = default;
};

std::string encode(const Hello& message);
std::string encode(const TrialAssignment& message);
std::string encode(const GroupWelcome& message);
std::string encode(const WorkerWelcome& message);
std::string encode(const Assignment& message);
std::string encode(const Next& message);
std::string encode(const Ask& message);
std::string encode(const Heartbeat& message);

/// A HELLO: "worker" makes it a worker's (a joined job's with "allocation"), "group" a
/// trial group's, and otherwise a trial's. The credential is checked for its form only;
/// whether it is right is the control server's to say.
Hello decode_hello(const JsonObject& body);
/// `message`: "WELCOME" or "ASSIGN", for the error text.
TrialAssignment decode_trial_assignment(const JsonObject& body, const char* message);
GroupWelcome decode_group_welcome(const JsonObject& body);
WorkerWelcome decode_worker_welcome(const JsonObject& body);
Assignment decode_assign(const JsonObject& body);
Next decode_next(const JsonObject& body);
Ask decode_ask(const JsonObject& body);
Heartbeat decode_heartbeat(const JsonObject& body);

}  // namespace slurmtune::protocol
