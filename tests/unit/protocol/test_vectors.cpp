// The shared test vectors (tests/protocol/vectors.json, also read by the Python client's
// test): every accepted payload decodes and encodes back to the same JSON object, every
// refused one is refused with exactly its text.
#define BOOST_TEST_MODULE protocol_vectors
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "core/json.hpp"
#include "protocol/auth_messages.hpp"
#include "protocol/trial_messages.hpp"
#include "protocol/worker_messages.hpp"
#include "runtime/protocol.hpp"

using namespace slurmtune;

namespace {

core::JsonObject vectors() {
  std::ifstream in(SLURMTUNE_PROTOCOL_VECTORS);
  std::stringstream text;
  text << in.rdbuf();
  return std::get<core::JsonObject>(core::parse_json(text.str()).data);
}

const core::JsonObject& object_at(const core::JsonObject& o, const char* key) {
  return std::get<core::JsonObject>(o.at(key).data);
}

// Decodes `payload` as `message` and encodes it again.
std::string round_trip(const std::string& message, const core::JsonObject& payload) {
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
  if (message == "CHALLENGE") return p::encode(p::decode_challenge(payload));
  if (message == "PROOF") return p::encode(p::decode_proof(payload));
  BOOST_FAIL("no typed message " + message + " (add it here)");
  return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(accepted_payloads_round_trip) {
  const auto all = vectors();
  int checked = 0;
  for (const auto& entry : std::get<core::JsonArray>(all.at("accept").data)) {
    const auto& e = std::get<core::JsonObject>(entry.data);
    const std::string message = std::get<std::string>(e.at("message").data);
    const auto& payload = object_at(e, "payload");
    const std::string again = round_trip(message, payload);
    BOOST_TEST(
        core::to_json_text(core::parse_json(again)) == core::to_json_text(core::JsonValue{payload}),
        message);
    ++checked;
  }
  BOOST_TEST(checked >= 10);
}

BOOST_AUTO_TEST_CASE(refused_payloads_say_why) {
  const auto all = vectors();
  int checked = 0;
  for (const auto& entry : std::get<core::JsonArray>(all.at("refuse").data)) {
    const auto& e = std::get<core::JsonObject>(entry.data);
    const std::string message = std::get<std::string>(e.at("message").data);
    std::string refusal;
    try {
      round_trip(message, object_at(e, "payload"));
    } catch (const runtime::ProtocolError& error) {
      refusal = error.what();
    }
    BOOST_TEST(refusal == std::get<std::string>(e.at("refusal").data), message << ": " << refusal);
    ++checked;
  }
  BOOST_TEST(checked >= 8);
}
