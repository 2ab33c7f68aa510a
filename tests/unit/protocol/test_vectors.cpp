// The shared test vectors (tests/protocol/vectors.json, also read by the Python client's
// test): every accepted payload decodes and encodes back to the same JSON object, every
// refused one is refused with exactly its text.
#define BOOST_TEST_MODULE protocol_vectors
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "protocol/auth_messages.hpp"
#include "protocol/credentials.hpp"
#include "protocol/session_messages.hpp"
#include "protocol/trial_messages.hpp"
#include "protocol/wire/json_value.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/worker_messages.hpp"

using namespace slurmtune;

namespace {

// One vector of the file's list `kind` ("accept" or "refuse").
struct Vector {
  std::string message;
  protocol::JsonObject payload;
  std::string refusal;  ///< "refuse" only
};

std::vector<Vector> vectors(const char* kind) {
  std::ifstream in(SLURMTUNE_PROTOCOL_VECTORS);
  std::stringstream text;
  text << in.rdbuf();
  const auto all = std::get<protocol::JsonObject>(protocol::parse_json(text.str()).data);
  std::vector<Vector> out;
  for (const auto& entry : std::get<protocol::JsonArray>(all.at(kind).data)) {
    const auto& e = std::get<protocol::JsonObject>(entry.data);
    const auto refusal = e.find("refusal");
    out.push_back({std::get<std::string>(e.at("message").data),
                   std::get<protocol::JsonObject>(e.at("payload").data),
                   refusal == e.end() ? "" : std::get<std::string>(refusal->value.data)});
  }
  return out;
}

// Decodes `payload` as `message` and encodes it again.
std::string round_trip(const std::string& message, const protocol::JsonObject& payload) {
  namespace p = protocol;
  if (message == "BYE" || message == "TRIAL_END")
    return p::encode(p::decode_trial_ending(payload, message.c_str()));
  if (message == "REPORT") return p::encode(p::decode_report(payload));
  if (message == "DECISION") return p::encode(p::decode_decision(payload));
  if (message == "CHECKPOINT") return p::encode(p::decode_checkpoint(payload));
  if (message == "LAUNCH") return p::encode(p::decode_launch(payload));
  if (message == "EXITED") return p::encode(p::decode_exited(payload));
  if (message == "SIGNAL") return p::encode(p::decode_signal(payload));
  if (message == "LEAVING") return p::encode(p::decode_leaving(payload));
  if (message == "ADMIT") return p::encode(p::decode_admit(payload));
  if (message == "CHALLENGE") return p::encode(p::decode_challenge(payload));
  if (message == "PROOF") return p::encode(p::decode_proof(payload));
  if (message == "HELLO") return p::encode(p::decode_hello(payload));
  if (message == "WELCOME") return p::encode(p::decode_trial_assignment(payload, "WELCOME"));
  if (message == "WELCOME of a group") return p::encode(p::decode_group_welcome(payload));
  if (message == "WELCOME of a worker") return p::encode(p::decode_worker_welcome(payload));
  if (message == "ASSIGN") return p::encode(p::decode_assign(payload));
  if (message == "NEXT") return p::encode(p::decode_next(payload));
  if (message == "ASK") return p::encode(p::decode_ask(payload));
  if (message == "HEARTBEAT") return p::encode(p::decode_heartbeat(payload));
  BOOST_FAIL("no typed message " + message + " (add it here)");
  return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(accepted_payloads_round_trip) {
  const auto accepted = vectors("accept");
  for (const auto& [message, payload, refusal] : accepted) {
    const std::string again = round_trip(message, payload);
    BOOST_TEST(protocol::to_json_text(protocol::parse_json(again)) ==
                   protocol::to_json_text(protocol::JsonValue{payload}),
               message);
  }
  BOOST_TEST(accepted.size() >= 31U);
}

BOOST_AUTO_TEST_CASE(refused_payloads_say_why) {
  const auto refused = vectors("refuse");
  for (const auto& [message, payload, expected] : refused) {
    std::string refusal;
    try {
      round_trip(message, payload);
    } catch (const protocol::ProtocolError& error) {
      refusal = error.what();
    }
    BOOST_TEST(refusal == expected, message << ": " << refusal);
  }
  BOOST_TEST(refused.size() >= 24U);
}

// The credentials the coordinator derives (protocol/credentials.hpp) equal those computed
// independently with Python's hmac when the vectors were written.
BOOST_AUTO_TEST_CASE(credentials_match_independent_hmacs) {
  std::ifstream in(SLURMTUNE_PROTOCOL_VECTORS);
  std::stringstream text;
  text << in.rdbuf();
  const auto all = std::get<protocol::JsonObject>(protocol::parse_json(text.str()).data);
  const auto secret = std::get<std::string>(all.at("credentials_secret").data);
  const auto& entries = std::get<protocol::JsonArray>(all.at("credentials").data);
  BOOST_TEST(entries.size() == 6U);
  for (const auto& entry : entries) {
    const auto& e = std::get<protocol::JsonObject>(entry.data);
    const auto& of = std::get<protocol::JsonObject>(e.at("for").data);
    const auto holder = std::get<std::string>(of.at("holder").data);
    const auto number = [&of](const char* name) { return std::get<double>(of.at(name).data); };
    std::string derived;
    if (holder == "attempt") {
      // What the coordinator expects of a HELLO; a worker's derivation (from its own
      // credential) gives the same for the attempts it started.
      const auto host = of.contains("host") ? std::get<std::string>(of.at("host").data) : "";
      const auto trial = static_cast<core::TrialId>(number("trial"));
      const protocol::TrialHello hello{trial, static_cast<std::uint64_t>(number("attempt")), 0, ""};
      const auto launch = static_cast<std::uint64_t>(number("launch"));
      derived = protocol::credential_for(secret, hello, protocol::AttemptGrant{launch, host});
      if (!host.empty())
        BOOST_TEST(derived ==
                   protocol::attempt_credential(protocol::worker_credential(secret, host), trial,
                                                hello.attempt, launch));
    } else if (holder == "step")
      derived = protocol::group_step_credential(secret, static_cast<int>(number("step")));
    else
      derived = protocol::worker_credential(secret, std::get<std::string>(of.at("node").data));
    BOOST_TEST(derived == std::get<std::string>(e.at("credential").data), holder);
  }
}
