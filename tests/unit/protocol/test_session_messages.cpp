// HELLO (four kinds), WELCOME, ASSIGN, NEXT, ASK and HEARTBEAT as types: round trips,
// which kind a HELLO is, and refusals naming the field.
#define BOOST_TEST_MODULE protocol_session_messages
#include <boost/test/unit_test.hpp>
#include <string>

#include "protocol/session_messages.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/wire/secret.hpp"
#include "unit/protocol/message_testing.hpp"

using namespace slurmtune;
using namespace slurmtune::protocol;
using testing::refusal;
const auto object = testing::payload;

BOOST_AUTO_TEST_CASE(every_kind_of_hello_decodes_to_what_was_encoded) {
  const std::string token = protocol::generate_token();
  const std::vector<Hello> hellos = {
      {token, "", TrialHello{12, 0, 0, ""}},
      {token, "", TrialHello{(std::uint64_t{1} << 53), 2, 3, "41.7"}},
      {token, "", GroupHello{2, 4, 1, "n[3-4]"}},
      {"", protocol::generate_token(), WorkerHello{"n3", "41.0"}},
      {"", protocol::generate_token(), JoinedHello{"m1", "42", "42.0", 8, 2, 3600.5}},
      {"", protocol::generate_token(), JoinedHello{"m1", "42", "", 1, 0, std::nullopt}},
  };
  for (const Hello& hello : hellos)
    BOOST_TEST((decode_hello(object(encode(hello))) == hello), encode(hello));
}

BOOST_AUTO_TEST_CASE(the_fields_say_which_kind_of_hello_it_is) {
  const auto from = [](const std::string& text) { return decode_hello(object(text)).from; };
  BOOST_TEST(
      std::holds_alternative<TrialHello>(from(R"({"token": "t", "trial": 1, "attempt": 0})")));
  BOOST_TEST(std::holds_alternative<GroupHello>(from(R"({"token": "t", "group": 1, "ranks": 2})")));
  BOOST_TEST(std::holds_alternative<WorkerHello>(from(R"({"token": "t", "worker": "n1"})")));
  BOOST_TEST(std::holds_alternative<JoinedHello>(
      from(R"({"token": "t", "worker": "n1", "allocation": "7", "cpus": 4, "gpus": 0})")));
  // rank defaults to 0 (the reporter), a group's step to 0.
  BOOST_TEST(std::get<TrialHello>(from(R"({"token": "t", "trial": 1, "attempt": 0})")).rank == 0);
  BOOST_TEST(std::get<GroupHello>(from(R"({"token": "t", "group": 1, "ranks": 2})")).step == 0);
  // No token is not a field error: the control server answers "wrong or missing credential".
  BOOST_TEST(decode_hello(object(R"({"trial": 1, "attempt": 0})")).token.empty());
}

BOOST_AUTO_TEST_CASE(a_hello_with_a_field_out_of_its_range_is_refused_by_name) {
  BOOST_TEST(refusal(decode_hello, R"({"token": "t", "trial": -1})") ==
             "HELLO: 'trial' must be a whole number from 0 to 9007199254740992, not -1.0");
  BOOST_TEST(refusal(decode_hello, R"({"token": "t", "trial": 1, "attempt": 0, "rank": 0.5})") ==
             "HELLO: 'rank' must be a whole number from 0 to 16777216, not 0.5");
  BOOST_TEST(
      refusal(decode_hello, R"({"token": "t", "trial": 1, "attempt": 0, "slurm_step": 7})") ==
      "HELLO: 'slurm_step' must be a string");
  BOOST_TEST(refusal(decode_hello, R"({"token": "t", "trial": 1})") ==
             "HELLO: 'attempt' must be a number");
  BOOST_TEST(refusal(decode_hello, R"({"token": 5, "trial": 1})") ==
             "HELLO: 'token' must be a string");
  BOOST_TEST(refusal(decode_hello, R"({"token": "t", "group": 1, "ranks": 0})") ==
             "HELLO of a group: 'ranks' must be a whole number from 1 to 16777216, not 0.0");
  BOOST_TEST(refusal(decode_hello, R"({"token": "t", "worker": ""})") ==
             "HELLO: 'worker' must not be empty");
  BOOST_TEST(
      refusal(decode_hello,
              R"({"token": "t", "worker": "n1", "allocation": "7", "cpus": 0, "gpus": 0})") ==
      "HELLO: 'cpus' must be a whole number from 1 to 16777216, not 0.0");
  BOOST_TEST(refusal(decode_hello, R"({"token": "t", "worker": "n1", "allocation": "7", "cpus": 1,
                                       "gpus": 0, "time_left_s": NaN})") ==
             "HELLO: 'time_left_s' must be a finite number, not NaN");
  BOOST_TEST(refusal(decode_hello, R"({"challenge": "short", "worker": "n1"})") ==
             "HELLO: 'challenge' must have 32 to 128 characters");
}

BOOST_AUTO_TEST_CASE(a_trial_assignment_round_trips_and_keeps_the_parameters_order) {
  TrialAssignment welcome;
  welcome.trial = 3;
  welcome.attempt = 1;
  welcome.params = R"({"lr": 0.01, "batch": 64, "opt": "sgd"})";
  welcome.trial_dir = "/s/study.trials/trial-3";
  welcome.checkpoint = "/s/study.trials/trial-3/ckpt-9.pt";
  welcome.checkpoint_step = 9;
  welcome.metric = "val_loss";
  const std::string text = encode(welcome);
  // The search space's order goes out as it is, not sorted.
  BOOST_TEST(text.find(R"("params": {"lr": 0.01, "batch": 64, "opt": "sgd"})") !=
             std::string::npos);
  const TrialAssignment back = decode_trial_assignment(object(text), "WELCOME");
  BOOST_TEST(protocol::to_json_text(protocol::JsonValue{back.params_object()}) ==
             protocol::to_json_text(protocol::JsonValue{welcome.params_object()}));
  BOOST_TEST(back.trial == 3U);
  BOOST_TEST(back.checkpoint_step.value_or(0) == 9.0);
  BOOST_TEST(back.metric == "val_loss");
  // A first attempt: no checkpoint (null), and ASSIGN carries no metric.
  TrialAssignment first;
  first.trial = 4;
  first.trial_dir = "/s/t";
  BOOST_TEST((decode_trial_assignment(object(encode(first)), "ASSIGN") == first));
  BOOST_TEST(encode(first).find("\"checkpoint\": null, \"checkpoint_step\": null") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(assign_is_a_trial_or_the_end_of_the_study) {
  TrialAssignment trial;
  trial.trial = 5;
  trial.trial_dir = "/s/t5";
  BOOST_TEST((decode_assign(object(encode(Assignment{trial}))) == Assignment{trial}));
  BOOST_TEST(
      std::holds_alternative<StudyOver>(decode_assign(object(encode(Assignment{StudyOver{}})))));
  BOOST_TEST(refusal(decode_assign, R"({"done": "yes"})") ==
             "ASSIGN: 'done' must be true or false");
}

BOOST_AUTO_TEST_CASE(a_bad_assignment_is_refused_by_name) {
  const auto as_welcome = [](const protocol::JsonObject& body) {
    return decode_trial_assignment(body, "WELCOME");
  };
  const std::string base = R"("trial": 1, "attempt": 0, "trial_dir": "/t")";
  BOOST_TEST(refusal(as_welcome, "{" + base + ", \"params\": [1]}") ==
             "WELCOME: 'params' must be an object");
  BOOST_TEST(refusal(as_welcome, R"({"trial": 1, "attempt": 0, "params": {}})") ==
             "WELCOME: 'trial_dir' must be a string");
  BOOST_TEST(refusal(as_welcome, "{" + base + R"(, "params": {}, "checkpoint_step": Infinity})") ==
             "WELCOME: 'checkpoint_step' must be a finite number, not Infinity");
  BOOST_TEST(refusal(as_welcome, "{" + base + R"(, "params": {}, "checkpoint": 3})") ==
             "WELCOME: 'checkpoint' must be a string");
  BOOST_TEST(
      refusal(as_welcome, R"({"trial": 1.5, "attempt": 0, "params": {}, "trial_dir": "/t"})") ==
      "WELCOME: 'trial' must be a whole number from 0 to 9007199254740992, not 1.5");
}

BOOST_AUTO_TEST_CASE(the_welcomes_of_groups_and_workers_round_trip) {
  BOOST_TEST((decode_group_welcome(object(encode(GroupWelcome{7}))) == GroupWelcome{7}));
  BOOST_TEST(
      (decode_worker_welcome(object(encode(WorkerWelcome{"n3", ""}))) == WorkerWelcome{"n3", ""}));
  BOOST_TEST((decode_worker_welcome(object(encode(WorkerWelcome{"m1", "42"}))) ==
              WorkerWelcome{"m1", "42"}));
  BOOST_TEST(refusal(decode_worker_welcome, "{}") == "WELCOME: 'worker' must be a string");
  // [checkpoints] node_local: the folder on the node's own disk, and whose it is.
  const WorkerWelcome local{"n3", "", "/local/{node}/ckpt", "/s/study.h5"};
  BOOST_TEST((decode_worker_welcome(object(encode(local))) == local));
  BOOST_TEST(refusal(decode_worker_welcome,
                     R"({"worker": "n3", "checkpoint_folder": "ckpt", "study": "/s/study.h5"})") ==
             "WELCOME: 'checkpoint_folder' must be an absolute path");
  BOOST_TEST(refusal(decode_worker_welcome, R"({"worker": "n3", "checkpoint_folder": "/l"})") ==
             "WELCOME: 'study' must be a string");
}

BOOST_AUTO_TEST_CASE(next_ask_and_heartbeat_are_empty_objects) {
  BOOST_TEST(encode(Next{}) == "{}");
  BOOST_TEST(encode(Ask{}) == "{}");
  BOOST_TEST(encode(Heartbeat{}) == "{}");
  BOOST_TEST((decode_next(object("{}")) == Next{}));
  BOOST_TEST((decode_ask(object(R"({"later": 1})")) == Ask{}));  // fields it may gain are ignored
  BOOST_TEST((decode_heartbeat(object("{}")) == Heartbeat{}));
}
