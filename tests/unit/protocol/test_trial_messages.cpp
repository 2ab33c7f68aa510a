// BYE and TRIAL_END as one type: round trips, and a status that is neither completed nor
// failed refused (it used to read as a failure).
#define BOOST_TEST_MODULE protocol_trial_messages
#include <boost/test/unit_test.hpp>
#include <string>

#include "protocol/trial_messages.hpp"
#include "protocol/wire/protocol.hpp"
#include "unit/protocol/message_testing.hpp"

using namespace slurmtune;
using namespace slurmtune::protocol;
using protocol::ProtocolError;
const auto object = testing::payload;

namespace {

std::string refusal(const std::string& text) {
  return testing::refusal(
      [](const protocol::JsonObject& b) { return decode_trial_ending(b, "BYE"); }, text);
}

}  // namespace

BOOST_AUTO_TEST_CASE(endings_decode_to_what_was_encoded) {
  for (const TrialEnding& ending : {TrialEnding{true, ""}, TrialEnding{false, "Traceback:\n  x\n"},
                                    TrialEnding{false, "\xE2\x80\xA6 \"quoted\" \x01"}})
    BOOST_TEST((decode_trial_ending(object(encode(ending)), "BYE") == ending));
  // What the Python client sends (json.dumps) reads the same.
  BOOST_TEST((decode_trial_ending(object(R"({"status": "failed", "error": "oom"})"), "TRIAL_END") ==
              TrialEnding{false, "oom"}));
  BOOST_TEST(decode_trial_ending(object(R"({"status": "completed"})"), "BYE").completed);
}

BOOST_AUTO_TEST_CASE(a_status_must_say_completed_or_failed) {
  BOOST_TEST(refusal(R"({"status": "done"})") ==
             "BYE: 'status' must be \"completed\" or \"failed\", not \"done\"");
  BOOST_TEST(refusal(R"({})") == "BYE: 'status' must be a string");
  BOOST_TEST(refusal(R"({"status": "failed", "error": 7})") == "BYE: 'error' must be a string");
}

// Issue #41 (6): a REPORT's or CHECKPOINT's step is from 0 to 2^53 (core/steps.hpp); -5
// and 1e300 were recorded and came out of the TensorBoard export as -2^63.
BOOST_AUTO_TEST_CASE(steps_outside_their_range_are_refused) {
  const auto report = [](const std::string& text) {
    return testing::refusal([](const protocol::JsonObject& b) { return decode_report(b); }, text);
  };
  BOOST_TEST(report(R"({"step": -5, "metrics": {"loss": 1}})") ==
             "REPORT: 'step' must be from 0 to 2^53 (9007199254740992), not -5");
  BOOST_TEST(report(R"({"step": 1e300, "metrics": {"loss": 1}})") ==
             "REPORT: 'step' must be from 0 to 2^53 (9007199254740992), not 1e+300");
  BOOST_TEST(report(R"({"step": NaN, "metrics": {"loss": 1}})") ==
             "REPORT: 'step' must be from 0 to 2^53 (9007199254740992), not NaN");
  BOOST_TEST(decode_report(object(R"({"step": 9007199254740992, "metrics": {}})")).step ==
             9007199254740992.0);
  BOOST_TEST(decode_report(object(R"({"step": 0.5, "metrics": {}})")).step == 0.5);
  BOOST_TEST(testing::refusal([](const protocol::JsonObject& b) { return decode_checkpoint(b); },
                              R"({"step": -1, "path": "ck"})") ==
             "CHECKPOINT: 'step' must be from 0 to 2^53 (9007199254740992), not -1");
}

// Issue #41 (8): a checkpoint path with a NUL byte or a lone surrogate named another file
// than the trial meant (`ck\u0000../../etc` was indexed as `.../trial-0/etc`).
BOOST_AUTO_TEST_CASE(checkpoint_paths_are_refused_with_nul_or_lone_surrogates) {
  const auto checkpoint = [](const std::string& text) {
    return testing::refusal([](const protocol::JsonObject& b) { return decode_checkpoint(b); },
                            text);
  };
  BOOST_TEST(checkpoint(R"({"step": 1, "path": "ck\u0000../../etc"})") ==
             "CHECKPOINT: 'path' holds a NUL byte; a path cannot");
  BOOST_TEST(checkpoint(R"({"step": 1, "path": "ck-\udcff.pt"})")
                 .find("CHECKPOINT: 'path' holds U+FFFD") == 0U);
  BOOST_TEST(decode_checkpoint(object(R"({"step": 1, "path": "ck-\ud83d\ude00.pt"})")).path ==
             "ck-\xF0\x9F\x98\x80.pt");
}
