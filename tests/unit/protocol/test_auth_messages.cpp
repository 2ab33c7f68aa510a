// CHALLENGE, PROOF and ERROR as types: round trips, and refusals naming the field.
#define BOOST_TEST_MODULE protocol_auth_messages
#include <boost/test/unit_test.hpp>
#include <string>

#include "protocol/auth_messages.hpp"
#include "protocol/wire/mutual_auth.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/wire/secret.hpp"
#include "unit/protocol/message_testing.hpp"

using namespace slurmtune;
using namespace slurmtune::protocol;
using protocol::ProtocolError;
using testing::refusal;
const auto object = testing::payload;

BOOST_AUTO_TEST_CASE(every_message_decodes_to_what_was_encoded) {
  const std::string token = protocol::generate_token(), nonce = protocol::generate_token();
  const Challenge challenge{nonce, protocol::coordinator_proof(token, "w", nonce)};
  BOOST_TEST((decode_challenge(object(encode(challenge))) == challenge));
  const Proof proof{protocol::worker_proof(token, nonce, "w")};
  BOOST_TEST((decode_proof(object(encode(proof))) == proof));
  const ErrorReply error{"wrong token \"x\"\n"};
  BOOST_TEST((decode_error(object(encode(error))) == error));
}

BOOST_AUTO_TEST_CASE(nonces_and_proofs_are_checked) {
  const std::string hex(64, 'a');
  BOOST_TEST(refusal(decode_challenge, R"({"nonce": "short", "proof": ")" + hex + "\"}") ==
             "CHALLENGE: 'nonce' must have 32 to 128 characters");
  BOOST_TEST(refusal(decode_challenge, "{\"nonce\": \"" + std::string(129, 'n') +
                                           "\", \"proof\": \"" + hex + "\"}") ==
             "CHALLENGE: 'nonce' has 129 bytes, at most 128 are allowed");
  BOOST_TEST(refusal(decode_challenge, "{\"nonce\": \"" + std::string(40, 'n') + "\"}") ==
             "CHALLENGE: 'proof' must be a string");
  BOOST_TEST(refusal(decode_proof, R"({"proof": ")" + std::string(64, 'A') + "\"}") ==
             "PROOF: 'proof' must be 64 lowercase hex digits");
  BOOST_TEST(refusal(decode_proof, R"({"proof": ")" + std::string(63, 'a') + "\"}") ==
             "PROOF: 'proof' must be 64 lowercase hex digits");
  BOOST_TEST(refusal(decode_proof, R"({"proof": ")" + hex + "\"}").empty());
}

BOOST_AUTO_TEST_CASE(an_error_without_a_reason_still_reads) {
  BOOST_TEST(decode_error(object("{}")).error == "(no reason given)");
  BOOST_TEST(decode_error(object(R"({"error": 3})")).error == "(no reason given)");
}
