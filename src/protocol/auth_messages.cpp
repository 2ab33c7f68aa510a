#include "protocol/auth_messages.hpp"

#include "core/number_text.hpp"
#include "protocol/fields.hpp"

namespace slurmtune::protocol {
namespace {

std::string hex_proof(const JsonObject& body, const char* message) {
  std::string proof = required_text(body, "proof", message, 64);
  if (proof.size() != 64 || proof.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw ProtocolError(std::string(message) + ": 'proof' must be 64 lowercase hex digits");
  return proof;
}

}  // namespace

std::string nonce_field(const JsonObject& body, const char* name, const char* message) {
  std::string nonce = required_text(body, name, message, kMaxNonce);
  if (nonce.size() < kMinNonce)
    throw ProtocolError(where(message, name) + " must have " + std::to_string(kMinNonce) + " to " +
                        std::to_string(kMaxNonce) + " characters");
  return nonce;
}

std::string encode(const Challenge& m) {
  return "{\"nonce\": " + core::json_quote(m.nonce) + ", \"proof\": " + core::json_quote(m.proof) +
         "}";
}

std::string encode(const Proof& m) {
  return "{\"proof\": " + core::json_quote(m.proof) + "}";
}

std::string encode(const ErrorReply& m) {
  return "{\"error\": " + core::json_quote(m.error) + "}";
}

Challenge decode_challenge(const JsonObject& body) {
  Challenge m;
  m.nonce = nonce_field(body, "nonce", "CHALLENGE");
  m.proof = hex_proof(body, "CHALLENGE");
  return m;
}

Proof decode_proof(const JsonObject& body) {
  return Proof{hex_proof(body, "PROOF")};
}

ErrorReply decode_error(const JsonObject& body) {
  const std::string error = text(body, "error");
  return ErrorReply{error.empty() ? "(no reason given)" : error};
}

}  // namespace slurmtune::protocol
