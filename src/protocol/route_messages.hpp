#pragma once
// The messages of node agents and of room (doc/protocol.md#node-agents): ROUTED, one
// frame of a channel an agent carries; CHANNEL_CLOSED, that channel's end; BUSY, a
// connection refused for room that the client may try again. Types with one encode and
// one decode each (see worker_messages.hpp).
//
// An agent (a worker step, or a relay above agents) holds one authenticated connection
// to the coordinator and carries the connections of the processes on its node as
// channels of it: each local connection is a channel number the agent picks, and every
// frame of it travels whole inside a ROUTED frame. The coordinator authenticates a
// channel's HELLO exactly as a direct connection's, so an agent forwards claims it
// cannot forge.
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/wire/json_value.hpp"
#include "protocol/wire/protocol.hpp"

namespace slurmtune::protocol {

/// Channel numbers: 1 to 2^53 (a JSON number holds them exactly).
inline constexpr std::uint64_t kMaxChannel = std::uint64_t{1} << 53;

/// ROUTED: channel `channel`'s frame `frame`.
struct Routed {
  std::uint64_t channel = 0;
  Frame frame;
};

/// The whole ROUTED frame (header included) for `inner`, one complete encoded frame.
std::string encode_routed(std::uint64_t channel, std::string_view inner);
/// The channel and the frame inside a ROUTED frame's payload: exactly one whole frame,
/// checked as FrameDecoder checks any; ProtocolError naming what is wrong otherwise.
Routed decode_routed(const Frame& frame);

/// CHANNEL_CLOSED, both ways: the agent's local peer went away, or the coordinator
/// closed that channel (after its ERROR or BUSY, which arrive first).
struct ChannelClosed {
  std::uint64_t channel = 0;
  std::string reason;
  friend bool operator==(const ChannelClosed&, const ChannelClosed&) = default;
};
std::string encode(const ChannelClosed& message);
ChannelClosed decode_channel_closed(const JsonObject& body);

/// BUSY, coordinator -> client, before it closes: no room for this connection now; the
/// client connects again after `retry_after_s` (0.1 to 600) and says so where its user sees it.
struct Busy {
  std::string why;
  double retry_after_s = 1;
  friend bool operator==(const Busy&, const Busy&) = default;
};
inline constexpr double kMinRetryAfter = 0.1, kMaxRetryAfter = 600;
std::string encode(const Busy& message);
Busy decode_busy(const JsonObject& body);

}  // namespace slurmtune::protocol
