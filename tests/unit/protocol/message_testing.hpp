#pragma once
// Helpers of the typed-message tests: a payload as the coordinator parses it, and the
// text a decode refuses it with.
#include <string>

#include "protocol/wire/json_value.hpp"
#include "protocol/wire/protocol.hpp"

namespace slurmtune::testing {

/// `text` parsed as a frame's payload (a JSON object), as every receiver parses it.
inline protocol::JsonObject payload(const std::string& text) {
  return protocol::payload_object(protocol::Frame{protocol::MessageType::Hello, text});
}

/// The ProtocolError's text, or "" when `decode` accepts `text`.
template <class Decode>
std::string refusal(Decode decode, const std::string& text) {
  try {
    decode(payload(text));
  } catch (const protocol::ProtocolError& e) {
    return e.what();
  }
  return "";
}

}  // namespace slurmtune::testing
