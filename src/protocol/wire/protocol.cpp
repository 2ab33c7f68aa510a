#include "protocol/wire/protocol.hpp"

namespace slurmtune::protocol {

std::string_view to_string(MessageType type) {
  switch (type) {
    case MessageType::Hello:
      return "HELLO";
    case MessageType::Welcome:
      return "WELCOME";
    case MessageType::Report:
      return "REPORT";
    case MessageType::Decision:
      return "DECISION";
    case MessageType::Ask:
      return "ASK";
    case MessageType::Checkpoint:
      return "CHECKPOINT";
    case MessageType::Bye:
      return "BYE";
    case MessageType::Error:
      return "ERROR";
    case MessageType::Next:
      return "NEXT";
    case MessageType::Assign:
      return "ASSIGN";
    case MessageType::TrialEnd:
      return "TRIAL_END";
    case MessageType::Heartbeat:
      return "HEARTBEAT";
    case MessageType::Launch:
      return "LAUNCH";
    case MessageType::Exited:
      return "EXITED";
    case MessageType::Signal:
      return "SIGNAL";
    case MessageType::Challenge:
      return "CHALLENGE";
    case MessageType::Proof:
      return "PROOF";
    case MessageType::Leaving:
      return "LEAVING";
    case MessageType::Routed:
      return "ROUTED";
    case MessageType::ChannelClosed:
      return "CHANNEL_CLOSED";
    case MessageType::Busy:
      return "BUSY";
    case MessageType::Admit:
      return "ADMIT";
    case MessageType::Remove:
      return "REMOVE";
    case MessageType::CopyCheckpoint:
      return "COPY";
    case MessageType::CheckpointCopied:
      return "COPIED";
  }
  return "?";
}

namespace {
bool known_type(std::uint8_t t) {
  return t >= 1 && t <= 25;
}
}  // namespace

std::string encode_frame(MessageType type, std::string_view payload) {
  const std::size_t limit = max_payload(static_cast<std::uint8_t>(type));
  if (payload.size() > limit)
    throw ProtocolError("payload of " + std::to_string(payload.size()) + " bytes exceeds " +
                        std::to_string(limit));
  const auto n = static_cast<std::uint32_t>(payload.size());
  std::string frame = {'S',
                       'T',
                       static_cast<char>(kProtocolVersion),
                       static_cast<char>(type),
                       static_cast<char>((n >> 24) & 0xFF),
                       static_cast<char>((n >> 16) & 0xFF),
                       static_cast<char>((n >> 8) & 0xFF),
                       static_cast<char>(n & 0xFF)};
  frame.append(payload);
  return frame;
}

void FrameDecoder::feed(std::string_view bytes) {
  // Drop what was decoded before growing: the buffer stays one frame long at most.
  if (consumed_ > 0) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer_.append(bytes);
}

std::optional<Frame> FrameDecoder::next() {
  const std::string_view rest = std::string_view(buffer_).substr(consumed_);
  // Validate the header as soon as its bytes arrive, so garbage is refused at once
  // rather than after waiting for a bogus length.
  if (!rest.empty() && rest[0] != 'S') throw ProtocolError("bad magic (not a slurmtune client)");
  if (rest.size() >= 2 && rest[1] != 'T') throw ProtocolError("bad magic (not a slurmtune client)");
  if (rest.size() >= 3 && static_cast<std::uint8_t>(rest[2]) != kProtocolVersion)
    throw ProtocolError("protocol version " + std::to_string(static_cast<std::uint8_t>(rest[2])) +
                        ", this coordinator speaks " + std::to_string(kProtocolVersion));
  if (rest.size() >= 4 && !known_type(static_cast<std::uint8_t>(rest[3])))
    throw ProtocolError("unknown message type " +
                        std::to_string(static_cast<std::uint8_t>(rest[3])));
  if (rest.size() < kHeaderSize) return std::nullopt;
  std::uint32_t n = 0;
  for (int i = 4; i < 8; ++i)
    n = (n << 8) | static_cast<std::uint8_t>(rest[static_cast<std::size_t>(i)]);
  if (const std::size_t limit = max_payload(static_cast<std::uint8_t>(rest[3])); n > limit)
    throw ProtocolError("frame of " + std::to_string(n) + " bytes exceeds the limit of " +
                        std::to_string(limit));
  if (rest.size() < kHeaderSize + n) return std::nullopt;
  Frame frame{static_cast<MessageType>(rest[3]), std::string(rest.substr(kHeaderSize, n))};
  consumed_ += kHeaderSize + n;
  return frame;
}

JsonObject payload_object(const Frame& frame) {
  try {
    auto value = parse_json(frame.payload);
    if (!value.is_object())
      throw ProtocolError(std::string(to_string(frame.type)) + " payload is not a JSON object");
    return std::get<JsonObject>(std::move(value.data));
  } catch (const InputError& e) {
    throw ProtocolError(std::string(to_string(frame.type)) + " payload: " + e.what());
  }
}

}  // namespace slurmtune::protocol
