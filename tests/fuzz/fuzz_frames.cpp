// libFuzzer target: the control plane's frame decoder and message decoding, as the
// coordinator runs them on bytes from the network. The first byte sets the chunk size
// the stream arrives in. A malformed stream must end in ProtocolError; decoded payloads
// go through every typed decoder (protocol/*_messages.hpp), as the handlers receive
// them: a decoded message must encode and decode again to the same message. A ROUTED
// frame (a node agent's) is unwrapped as the coordinator does, level by level, and what
// it carries goes the same way.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "protocol/auth_messages.hpp"
#include "protocol/route_messages.hpp"
#include "protocol/session_messages.hpp"
#include "protocol/trial_messages.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/worker_messages.hpp"

using namespace slurmtune;

namespace {
slurmtune::protocol::JsonObject parse_object(const std::string& text) {
  return protocol::payload_object(protocol::Frame{protocol::MessageType::Launch, text});
}

// Decodes `body` as a typed message; what decodes must encode and decode to itself.
template <class Decode>
void round_trip(const slurmtune::protocol::JsonObject& body, Decode decode) {
  try {
    const auto message = decode(body);
    if (!(decode(parse_object(slurmtune::protocol::encode(message))) == message)) __builtin_trap();
  } catch (const protocol::ProtocolError&) {
  }
}

void decode_typed(const slurmtune::protocol::JsonObject& body) {
  namespace p = slurmtune::protocol;
  round_trip(body, p::decode_launch);
  round_trip(body, p::decode_exited);
  round_trip(body, p::decode_signal);
  round_trip(body, p::decode_leaving);
  round_trip(body, p::decode_challenge);
  round_trip(body, p::decode_proof);
  round_trip(body, p::decode_error);
  round_trip(body, p::decode_report);
  round_trip(body, p::decode_decision);
  round_trip(body, p::decode_checkpoint);
  round_trip(body, [](const slurmtune::protocol::JsonObject& b) {
    return p::decode_trial_ending(b, "BYE");
  });
  round_trip(body, p::decode_hello);
  round_trip(body, [](const slurmtune::protocol::JsonObject& b) {
    return p::decode_trial_assignment(b, "WELCOME");
  });
  round_trip(body, p::decode_group_welcome);
  round_trip(body, p::decode_worker_welcome);
  round_trip(body, p::decode_assign);
  round_trip(body, p::decode_channel_closed);
  round_trip(body, p::decode_busy);
}

// A frame as the coordinator takes it: a ROUTED one unwrapped (at most kMaxRouteDepth
// levels: a deeper one no longer fits its payload), and what it carries must wrap again
// to the same bytes.
void take(const slurmtune::protocol::Frame& frame, std::size_t depth = 0) {
  namespace p = slurmtune::protocol;
  if (frame.type == p::MessageType::Routed) {
    const p::Routed routed = p::decode_routed(frame);
    const std::string inner = p::encode_frame(routed.frame.type, routed.frame.payload);
    if (p::encode_routed(routed.channel, inner) !=
        p::encode_frame(p::MessageType::Routed, frame.payload))
      __builtin_trap();
    if (depth > p::kMaxRouteDepth) __builtin_trap();
    return take(routed.frame, depth + 1);
  }
  decode_typed(p::payload_object(frame));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  protocol::FrameDecoder decoder;
  try {
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
      decoder.feed(stream.substr(at, chunk));
      while (auto frame = decoder.next()) {
        try {
          take(*frame);
        } catch (const protocol::ProtocolError&) {
        }
      }
    }
  } catch (const protocol::ProtocolError&) {
  }
  return 0;
}
