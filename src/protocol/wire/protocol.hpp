#pragma once
// The control-plane wire format between `slurmtune run` and the report clients (C++,
// Python, shell). Every message is one frame:
//
//   offset 0  2 bytes  magic "ST"
//          2  1 byte   protocol version (kProtocolVersion)
//          3  1 byte   message type (MessageType)
//          4  4 bytes  payload length, big-endian, at most kMaxPayload
//          8  ...      payload: one JSON object (UTF-8)
//
// A connection must send HELLO (with the study's token) first. Frames are decoded
// incrementally; anything malformed (bad magic, another version, an unknown type, an
// oversized or non-object payload) is a ProtocolError and ends the connection.
// doc/protocol.md describes every message.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "protocol/wire/json_value.hpp"

namespace slurmtune::protocol {

inline constexpr std::uint8_t kProtocolVersion = 1;
inline constexpr std::size_t kHeaderSize = 8;
inline constexpr std::size_t kMaxPayload = std::size_t{64} * 1024;
/// A ROUTED frame carries a whole frame and its 8-byte channel: one more level of a relay
/// tree adds 16 bytes, and at most kMaxRouteDepth levels fit.
inline constexpr std::size_t kMaxRouteDepth = 8;
inline constexpr std::size_t kMaxRoutedPayload = kMaxPayload + kMaxRouteDepth * (8 + kHeaderSize);
/// The largest payload a frame of `type` may carry.
constexpr std::size_t max_payload(std::uint8_t type) {
  return type == 19 ? kMaxRoutedPayload : kMaxPayload;
}

enum class MessageType : std::uint8_t {
  Hello = 1,       ///< client -> server: {"token", "trial", "rank"} or {"token", "group", ...}
  Welcome = 2,     ///< server -> client: {"trial", "params", "trial_dir", "checkpoint", ...}
  Report = 3,      ///< client -> server: {"step", "metrics": {name: value}}
  Decision = 4,    ///< server -> client: {"decision": "continue|stop|pause", ...}
  Ask = 5,         ///< client -> server: {} — the latest decision, for non-reporting ranks
  Checkpoint = 6,  ///< client -> server: {"step", "path", "size"}
  Bye = 7,         ///< client -> server: {"status": "completed|failed", "error"}
  Error = 8,       ///< server -> client: {"error"} before closing
  // Trial groups (one MPI step split into per-trial communicators; doc/protocol.md):
  Next = 9,        ///< group -> server: {} — the group is free, give it a trial
  Assign = 10,     ///< server -> group: {"trial", "params", ...} or {"done": true}
  TrialEnd = 11,   ///< group -> server: {"status": "completed|failed", "error"}
  Heartbeat = 12,  ///< client -> server: {} — alive, in a long step (no reply)
  // Worker steps ([resources] launch = "worker": one long-lived step per node):
  Launch = 13,  ///< server -> worker: {"key", "argv", "env", "stdout", "stderr"}, or {"done": true}
  Exited = 14,  ///< worker -> server: {"key", "code", "signal", "signaled", "error"}
  Signal = 15,  ///< server -> worker: {"key", "signal"} — to the trial's process group
  // Mutual authentication (protocol/wire/mutual_auth.hpp), for HELLOs with a "challenge":
  Challenge = 16,  ///< server -> client: {"nonce", "proof"}
  Proof = 17,      ///< client -> server: {"proof"}
  // Joined allocations (`slurmtune join`):
  Leaving = 18,  ///< worker -> server: {"why"} — its allocation ends: suspend its trials
  // Node agents (a worker step that carries its node's traffic; protocol/route_messages.hpp):
  Routed = 19,         ///< agent <-> server: 8-byte channel, then one whole inner frame
  ChannelClosed = 20,  ///< agent <-> server: {"channel", "reason"} — that channel's peer is gone
  // Room (doc/protocol.md#limits):
  Busy = 21,  ///< server -> client: {"why", "retry_after_s"} before closing: connect again then
  // Trials of several ranks started as their own steps, carried by their nodes' agents:
  Admit = 22,  ///< server -> worker: {"key", "admit"} — that attempt's ranks may (not) connect
  // [checkpoints] node_local: the node agents do the file work on their own disks:
  Remove = 23,            ///< server -> worker: {"trial", "paths"} — checkpoints the study drops
  CopyCheckpoint = 24,    ///< server -> worker: {"id", "trial", "step", "source" | "donor"} — PBT
  CheckpointCopied = 25,  ///< worker -> server: {"id", "path", "bytes", "how" | "error"}
};
std::string_view to_string(MessageType type);

/// A malformed frame or message; what() says what was wrong, for the coordinator's log.
class ProtocolError : public Error {
 public:
  using Error::Error;
};

struct Frame {
  MessageType type;
  std::string payload;  ///< JSON text
};

/// Encodes one frame; throws ProtocolError when the payload exceeds kMaxPayload.
std::string encode_frame(MessageType type, std::string_view payload);

/// Incremental decoder for one connection's byte stream.
class FrameDecoder {
 public:
  /// Appends received bytes.
  void feed(std::string_view bytes);
  /// The next complete frame, or nullopt when more bytes are needed. Throws
  /// ProtocolError at the first malformed header (the connection must be closed).
  std::optional<Frame> next();
  /// Bytes received but not yet decoded.
  std::size_t pending() const { return buffer_.size() - consumed_; }

 private:
  std::string buffer_;
  std::size_t consumed_ = 0;
};

/// Parses a frame's payload as a JSON object; ProtocolError otherwise.
JsonObject payload_object(const Frame& frame);

}  // namespace slurmtune::protocol
