#pragma once
// The messages of mutual authentication (protocol/wire/mutual_auth.hpp, doc/protocol.md) and
// ERROR, as types with one encode and one decode each (see worker_messages.hpp).
#include <string>

#include "protocol/wire/json_value.hpp"

namespace slurmtune::protocol {

/// CHALLENGE, coordinator -> worker: the coordinator's nonce and its proof of the token.
struct Challenge {
  std::string nonce;  ///< 32 to 128 characters
  std::string proof;  ///< 64 lowercase hex digits (HMAC-SHA-256)
  friend bool operator==(const Challenge&, const Challenge&) = default;
};

/// PROOF, worker -> coordinator: the worker's proof of the token.
struct Proof {
  std::string proof;  ///< 64 lowercase hex digits
  friend bool operator==(const Proof&, const Proof&) = default;
};

/// ERROR, coordinator -> client: why the connection is being closed.
struct ErrorReply {
  std::string error;
  friend bool operator==(const ErrorReply&, const ErrorReply&) = default;
};

std::string encode(const Challenge& message);
std::string encode(const Proof& message);
std::string encode(const ErrorReply& message);

Challenge decode_challenge(const JsonObject& body);
Proof decode_proof(const JsonObject& body);
/// Any text is accepted (it is shown, with control characters written out); a missing
/// or non-string "error" reads as "(no reason given)".
ErrorReply decode_error(const JsonObject& body);

/// Bounds of a nonce: CHALLENGE's "nonce" and HELLO's "challenge".
inline constexpr std::size_t kMinNonce = 32, kMaxNonce = 128;

/// A nonce field (`name` of `message`) of kMinNonce to kMaxNonce characters;
/// ProtocolError naming it otherwise.
std::string nonce_field(const JsonObject& body, const char* name, const char* message);

}  // namespace slurmtune::protocol
