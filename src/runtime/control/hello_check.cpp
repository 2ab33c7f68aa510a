#include "runtime/control/hello_check.hpp"

#include "protocol/auth_messages.hpp"
#include "protocol/credentials.hpp"
#include "protocol/wire/mutual_auth.hpp"
#include "protocol/wire/secret.hpp"

namespace slurmtune::runtime {

std::optional<protocol::Hello> HelloCheck::on_frame(const protocol::Frame& frame,
                                                    const std::string& secret,
                                                    const GrantOf& grant_of, std::string& reply) {
  if (challenged_) {
    if (frame.type != protocol::MessageType::Proof)
      throw protocol::ProtocolError("after CHALLENGE came " + std::string(to_string(frame.type)) +
                                    ", not PROOF");
    const protocol::Proof proof = protocol::decode_proof(protocol::payload_object(frame));
    if (!protocol::tokens_equal(proof.proof,
                                protocol::worker_proof(key_, server_nonce_, client_nonce_)))
      throw protocol::ProtocolError("wrong proof of the credential for " +
                                    protocol::claim_of(challenged_->from));
    std::optional<protocol::Hello> proven = std::move(challenged_);
    challenged_.reset();
    return proven;
  }
  if (frame.type != protocol::MessageType::Hello)
    throw protocol::ProtocolError("first message is " + std::string(to_string(frame.type)) +
                                  ", not HELLO");
  protocol::Hello hello = protocol::decode_hello(protocol::payload_object(frame));
  // The credential covers exactly what the HELLO claims: another trial's, attempt's or
  // step's is refused (it names only what the peer itself sent).
  const std::string key = protocol::credential_for(secret, hello.from, grant_of(hello));
  if (hello.challenge.empty()) {
    if (!protocol::tokens_equal(hello.token, key))
      throw protocol::ProtocolError("wrong or missing credential for " +
                                    protocol::claim_of(hello.from));
    return hello;
  }
  // The client proves itself second: a peer that does not hold the credential learns
  // only a proof bound to nonces that never come again.
  client_nonce_ = hello.challenge;
  server_nonce_ = protocol::generate_token();
  key_ = key;
  reply = protocol::encode_frame(
      protocol::MessageType::Challenge,
      protocol::encode(protocol::Challenge{
          server_nonce_, protocol::coordinator_proof(key_, client_nonce_, server_nonce_)}));
  challenged_ = std::move(hello);
  return std::nullopt;
}

}  // namespace slurmtune::runtime
