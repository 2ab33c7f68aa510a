#include "protocol/route_messages.hpp"

#include "core/number_text.hpp"
#include "protocol/fields.hpp"

namespace slurmtune::protocol {

std::string encode_routed(std::uint64_t channel, std::string_view inner) {
  std::string payload(8, '\0');
  for (int i = 7; i >= 0; --i, channel >>= 8)
    payload[static_cast<std::size_t>(i)] = static_cast<char>(channel & 0xFF);
  payload.append(inner);
  return encode_frame(MessageType::Routed, payload);
}

Routed decode_routed(const Frame& frame) {
  if (frame.payload.size() < 8 + kHeaderSize)
    throw ProtocolError("ROUTED: a payload of " + std::to_string(frame.payload.size()) +
                        " bytes holds no channel and frame");
  Routed routed;
  for (std::size_t i = 0; i < 8; ++i)
    routed.channel = (routed.channel << 8) | static_cast<std::uint8_t>(frame.payload[i]);
  if (routed.channel == 0 || routed.channel > kMaxChannel)
    throw ProtocolError("ROUTED: channel " + std::to_string(routed.channel) +
                        " is outside 1 to 2^53");
  FrameDecoder inner;
  inner.feed(std::string_view(frame.payload).substr(8));
  auto decoded = inner.next();
  if (!decoded || inner.pending() != 0)
    throw ProtocolError("ROUTED: channel " + std::to_string(routed.channel) +
                        " does not carry exactly one whole frame");
  routed.frame = std::move(*decoded);
  return routed;
}

namespace {
std::uint64_t channel_field(const JsonObject& body, const char* message) {
  return static_cast<std::uint64_t>(
      whole(body, "channel", message, 1, static_cast<std::int64_t>(kMaxChannel)));
}
}  // namespace

std::string encode(const ChannelClosed& m) {
  return "{\"channel\": " + std::to_string(m.channel) +
         ", \"reason\": " + core::json_quote(m.reason) + "}";
}

ChannelClosed decode_channel_closed(const JsonObject& body) {
  ChannelClosed m;
  m.channel = channel_field(body, "CHANNEL_CLOSED");
  m.reason = text(body, "reason");
  return m;
}

std::string encode(const Busy& m) {
  return "{\"why\": " + core::json_quote(m.why) +
         ", \"retry_after_s\": " + core::format_double(m.retry_after_s) + "}";
}

Busy decode_busy(const JsonObject& body) {
  Busy m;
  m.why = text(body, "why");
  m.retry_after_s = finite(body, "retry_after_s", "BUSY");
  if (m.retry_after_s < kMinRetryAfter || m.retry_after_s > kMaxRetryAfter)
    throw ProtocolError("BUSY: 'retry_after_s' must be from 0.1 to 600 seconds, not " +
                        core::format_double(m.retry_after_s));
  return m;
}

}  // namespace slurmtune::protocol
