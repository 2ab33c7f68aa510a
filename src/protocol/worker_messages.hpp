#pragma once
// The messages between the coordinator and its worker steps (doc/protocol.md, "Worker
// steps"), as types: one encode and one decode each, in one place. A decode checks every
// field (type, range, length) and throws ProtocolError naming the message and
// the field, so a handler never reads a field by name and never meets a wrong type.
#include <compare>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/trial_id.hpp"
#include "protocol/wire/json_value.hpp"

namespace slurmtune::protocol {

/// "TRIAL.ATTEMPT" ("12.0"): which attempt of which trial a worker's message is about.
struct ProcessKey {
  core::TrialId trial = 0;
  std::uint64_t attempt = 0;
  std::string text() const;
  static ProcessKey parse(const std::string& text, const char* message);
  friend auto operator<=>(const ProcessKey&, const ProcessKey&) = default;
};

/// LAUNCH, coordinator -> worker: start a trial's process as a child (no shell).
struct Launch {
  ProcessKey key;
  std::vector<std::string> argv;           ///< not empty
  std::map<std::string, std::string> env;  ///< added to the worker's environment
  std::string stdout_path, stderr_path;    ///< not empty
  std::vector<std::string> gpus;           ///< positions in the worker's CUDA_VISIBLE_DEVICES
  /// [checkpoints] node_local: the trial's folder on this node's own disk (absolute,
  /// normal, inside the agent's folder), which the worker makes (0700) first; else empty.
  std::string checkpoint_dir = {};
  /// The attempt's launch number (1 or more). The worker derives the attempt's credential
  /// from its own and this (protocol/credentials.hpp), so no file is made per launch on
  /// the study's file system.
  std::uint64_t launch = 1;
  friend bool operator==(const Launch&, const Launch&) = default;
};
/// LAUNCH {"done": true}: the study is over; the worker exits.
struct StudyOver {
  friend bool operator==(const StudyOver&, const StudyOver&) = default;
};
using LaunchOrDone = std::variant<Launch, StudyOver>;

/// EXITED, worker -> coordinator: a child ended (or could not start: `error`).
struct Exited {
  ProcessKey key;
  int code = 0;    ///< -1 to 255
  int signal = 0;  ///< 0 to 128
  bool signaled = false;
  std::string error;  ///< why it could not start, else empty
  friend bool operator==(const Exited&, const Exited&) = default;
};

/// SIGNAL, coordinator -> worker: to a child's process group.
struct Signal {
  ProcessKey key;
  int signal = 0;  ///< 1 to 64
  friend bool operator==(const Signal&, const Signal&) = default;
};

/// LEAVING, worker -> coordinator: its (joined) allocation ends.
struct Leaving {
  std::string why;
  friend bool operator==(const Leaving&, const Leaving&) = default;
};

/// ADMIT, coordinator -> worker: the ranks of an attempt started as its own step (a trial
/// of several ranks) may connect through this node's agent (`admit`), or no longer.
struct Admit {
  ProcessKey key;
  bool admit = true;
  friend bool operator==(const Admit&, const Admit&) = default;
};

/// REMOVE, coordinator -> worker: checkpoints of a trial on this node's own disk that
/// the study's [checkpoints] policy dropped (already recorded in the results file).
struct Remove {
  core::TrialId trial = 0;
  std::vector<std::string> paths;  ///< 1 to kMaxRemovePaths, each absolute and normal
  static constexpr std::size_t kMaxRemovePaths = 256;
  friend bool operator==(const Remove&, const Remove&) = default;
};

/// COPY, coordinator -> worker: PBT's copy of a checkpoint on this node's own disk
/// (runtime/pbt/pbt_checkpoints.hpp), made in trial `trial`'s folder there. A keep
/// (`source` set): the trial's checkpoint at `step`, into its pbt-kept/. A clone
/// (`donor` set): the donor's kept copy at `step`, as the trial's checkpoint; a clone for
/// a trial on another node goes in two hops through the trial's folder in STUDY.trials/,
/// which every node sees: `Stage` on the donor's node, then `Staged` on the trial's.
struct CopyCheckpoint {
  enum class Clone {
    Here,    ///< the donor's kept copy, on this node, into the trial's folder here
    Stage,   ///< the donor's kept copy, on this node, into the trial's STUDY.trials folder
    Staged,  ///< what Stage put there, into the trial's folder here (and the staged copy goes)
  };
  std::uint64_t id = 0;  ///< echoed in COPIED
  core::TrialId trial = 0;
  double step = 0;
  std::string source;                  ///< a keep: absolute and normal; a clone: empty
  std::optional<core::TrialId> donor;  ///< a clone: whose kept copy
  Clone clone = Clone::Here;           ///< a clone: where from and to ("stage": "to"/"from")
  bool if_missing = false;  ///< a keep: only if the kept copy at `step` is not there (a resume's)
  friend bool operator==(const CopyCheckpoint&, const CopyCheckpoint&) = default;
};

/// COPIED's `how` for an `if_missing` keep that found the kept copy there.
inline constexpr std::string_view kKeptAlready = "kept already";

/// COPIED, worker -> coordinator: how a COPY went.
struct CheckpointCopied {
  std::uint64_t id = 0;
  std::string path;  ///< the copy made (absolute); empty when it failed
  std::uint64_t bytes = 0;
  std::string how;    ///< TreeCopy::describe(), for the log
  std::string error;  ///< why it failed, else empty
  friend bool operator==(const CheckpointCopied&, const CheckpointCopied&) = default;
};

std::string encode(const Launch& message);
std::string encode(const StudyOver& message);
std::string encode(const LaunchOrDone& message);
std::string encode(const Exited& message);
std::string encode(const Signal& message);
std::string encode(const Leaving& message);
std::string encode(const Admit& message);
std::string encode(const Remove& message);
std::string encode(const CopyCheckpoint& message);
std::string encode(const CheckpointCopied& message);

LaunchOrDone decode_launch(const JsonObject& body);
Exited decode_exited(const JsonObject& body);
Signal decode_signal(const JsonObject& body);
Leaving decode_leaving(const JsonObject& body);
Admit decode_admit(const JsonObject& body);
Remove decode_remove(const JsonObject& body);
CopyCheckpoint decode_copy_checkpoint(const JsonObject& body);
CheckpointCopied decode_checkpoint_copied(const JsonObject& body);

}  // namespace slurmtune::protocol
