// The worker-step messages as types: each encodes and decodes to itself, and a decode
// refuses every malformed field with a ProtocolError naming the message and the field.
#define BOOST_TEST_MODULE protocol_worker_messages
#include <boost/test/unit_test.hpp>
#include <string>

#include "protocol/wire/protocol.hpp"
#include "protocol/worker_messages.hpp"
#include "unit/protocol/message_testing.hpp"

using namespace slurmtune;
using namespace slurmtune::protocol;
using protocol::ProtocolError;
using testing::refusal;
const auto object = testing::payload;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_message_decodes_to_what_was_encoded) {
  const Launch launch{{12, 3},
                      {"python3", "train.py", "--lr=0.1", "a \"quoted\" $HOME;"},
                      {{"SLURMTUNE_TRIAL_ID", "12"}, {"PATH", "/usr/bin:/bin"}},
                      "/s/study.trials/trial-12/stdout.log",
                      "/s/study.trials/trial-12/stderr.log",
                      {"0", "3"},
                      {},
                      7};
  BOOST_TEST((std::get<Launch>(decode_launch(object(encode(launch)))) == launch));
  BOOST_TEST(std::holds_alternative<StudyOver>(decode_launch(object(encode(StudyOver{})))));
  const Exited exited{{4, 0}, 127, 0, false, "cannot start: no such file \xE2\x80\xA6"};
  BOOST_TEST((decode_exited(object(encode(exited))) == exited));
  const Exited killed{{4, 1}, -1, 9, true, ""};
  BOOST_TEST((decode_exited(object(encode(killed))) == killed));
  const Signal signal{{7, 2}, 15};
  BOOST_TEST((decode_signal(object(encode(signal))) == signal));
  const Leaving leaving{"SIGUSR1: its time limit is near"};
  BOOST_TEST((decode_leaving(object(encode(leaving))) == leaving));
  for (const bool admit : {true, false}) {
    const Admit message{{9, 1}, admit};
    BOOST_TEST((decode_admit(object(encode(message))) == message));
  }
}

BOOST_AUTO_TEST_CASE(admit_refuses_each_malformed_field_by_name) {
  BOOST_TEST(has(refusal(decode_admit, R"({"admit": true})"), "ADMIT: 'key' must be a string"));
  BOOST_TEST(has(refusal(decode_admit, R"({"key": "1.x", "admit": true})"),
                 "ADMIT: 'key' must be TRIAL.ATTEMPT"));
  BOOST_TEST(
      has(refusal(decode_admit, R"({"key": "1.0"})"), "ADMIT: 'admit' must be true or false"));
  BOOST_TEST(has(refusal(decode_admit, R"({"key": "1.0", "admit": 1})"),
                 "ADMIT: 'admit' must be true or false"));
  BOOST_TEST(refusal(decode_admit, R"({"key": "1.0", "admit": false})").empty());
}

BOOST_AUTO_TEST_CASE(process_keys_are_trial_dot_attempt) {
  BOOST_TEST(ProcessKey::parse("12.0", "X").trial == 12U);
  BOOST_TEST(ProcessKey::parse("12.7", "X").attempt == 7U);
  BOOST_TEST((ProcessKey{3, 1}.text() == "3.1"));
  for (const char* bad :
       {"", "12", "12.", ".3", "a.b", "1.2.3", "-1.0", "1.-2", "99999999999999999999.0"})
    BOOST_CHECK_THROW(ProcessKey::parse(bad, "EXITED"), protocol::ProtocolError);
}

BOOST_AUTO_TEST_CASE(launch_refuses_each_malformed_field_by_name) {
  const std::string ok_tail = R"(, "stdout": "o", "stderr": "e", "launch": 2)";
  BOOST_TEST(has(refusal(decode_launch, R"({"argv": ["x"], "env": {})" + ok_tail + "}"),
                 "LAUNCH: 'key' must be a string"));
  BOOST_TEST(has(refusal(decode_launch, R"({"key": "1.0", "argv": [], "env": {})" + ok_tail + "}"),
                 "LAUNCH: 'argv' must name a program"));
  BOOST_TEST(
      has(refusal(decode_launch, R"({"key": "1.0", "argv": ["x", 3], "env": {})" + ok_tail + "}"),
          "LAUNCH: 'argv' item 1 must be a string"));
  BOOST_TEST(has(
      refusal(decode_launch, R"({"key": "1.0", "argv": ["x"], "env": {"A": 1})" + ok_tail + "}"),
      "LAUNCH: 'env' entry 'A' must be a string"));
  BOOST_TEST(has(refusal(decode_launch,
                         R"({"key": "1.0", "argv": ["x"], "env": {"A=B": "1"})" + ok_tail + "}"),
                 "not a variable name"));
  BOOST_TEST(
      has(refusal(decode_launch,
                  R"({"key": "1.0", "argv": ["x"], "env": {}, "stdout": "", "stderr": "e"})"),
          "LAUNCH: 'stdout' must not be empty"));
  for (const char* launch : {"", R"(, "launch": 0)", R"(, "launch": 1.5)", R"(, "launch": "2")"})
    BOOST_TEST(has(refusal(decode_launch,
                           std::string(R"({"key": "1.0", "argv": ["x"], "env": {}, "stdout": "o", )"
                                       R"("stderr": "e")") +
                               launch + "}"),
                   "LAUNCH: 'launch'"));
  BOOST_TEST(
      has(refusal(decode_launch,
                  R"({"key": "1.0", "argv": ["x"], "env": {}, "gpus": ["1;rm"])" + ok_tail + "}"),
          "not a device position"));
  BOOST_TEST(
      has(refusal(decode_launch, R"({"done": "yes"})"), "LAUNCH: 'done' must be true or false"));
  BOOST_TEST(
      refusal(decode_launch, R"({"key": "1.0", "argv": ["x"], "env": {})" + ok_tail + "}").empty());
  for (const char* folder :
       {"rel/trial-1", "/l/./trial-1", "/l/../trial-1", "/l//trial-1", "/l/trial-1/"})
    BOOST_TEST(
        has(refusal(decode_launch, std::string(R"({"key": "1.0", "argv": ["x"], "env": {})") +
                                       ok_tail + R"(, "checkpoint_dir": ")" + folder + "\"}"),
            "LAUNCH: 'checkpoint_dir' '" + std::string(folder) +
                "' must be an absolute path without"),
        folder);
}

BOOST_AUTO_TEST_CASE(launch_carries_a_folder_on_the_nodes_disk_and_remove_its_paths) {
  Launch launch{{3, 0}, {"x"}, {}, "/o", "/e", {}, "/local/n1/ckpt/trial-3"};
  BOOST_TEST((std::get<Launch>(decode_launch(object(encode(launch)))) == launch));
  const Remove remove{3, {"/local/n1/ckpt/trial-3/c-1.pt", "/local/n1/ckpt/trial-3/c-2.pt"}};
  BOOST_TEST((decode_remove(object(encode(remove))) == remove));
  BOOST_TEST(has(refusal(decode_remove, R"({"paths": ["/a"]})"), "REMOVE: 'trial' must be"));
  BOOST_TEST(has(refusal(decode_remove, R"({"trial": 3, "paths": []})"),
                 "REMOVE: 'paths' must hold 1 to 256 paths, not 0"));
  std::string many = R"({"trial": 3, "paths": [)";
  for (int i = 0; i < 257; ++i)
    many += std::string(i ? ", " : "") + "\"/a/" + std::to_string(i) + "\"";
  BOOST_TEST(has(refusal(decode_remove, many + "]}"), "not 257"));
  BOOST_TEST(has(refusal(decode_remove, R"({"trial": 3, "paths": ["/a/../b"]})"),
                 "REMOVE: 'paths' has '/a/../b' must be an absolute path"));
  BOOST_TEST(
      has(refusal(decode_remove, R"({"trial": 3, "paths": ["a/b"]})"), "must be an absolute path"));
  BOOST_TEST(has(refusal(decode_remove, R"({"trial": 3, "paths": [""]})"), "an empty path"));
}

BOOST_AUTO_TEST_CASE(copy_is_a_keep_or_a_clone_and_copied_says_how_it_went) {
  const CopyCheckpoint keep{4, 3, 6, "/local/n1/ckpt/trial-3/c.pt", std::nullopt};
  BOOST_TEST((decode_copy_checkpoint(object(encode(keep))) == keep));
  const CopyCheckpoint clone{5, 3, 6, {}, core::TrialId{7}};
  BOOST_TEST((decode_copy_checkpoint(object(encode(clone))) == clone));
  CopyCheckpoint again = keep;  // a resume's: only if the agent has no kept copy yet
  again.if_missing = true;
  BOOST_TEST((decode_copy_checkpoint(object(encode(again))) == again));
  BOOST_TEST(has(refusal(decode_copy_checkpoint,
                         R"({"id": 1, "trial": 3, "step": 6, "donor": 2, "if_missing": true})"),
                 "COPY: 'if_missing' goes with 'source' (a keep)"));
  BOOST_TEST(has(refusal(decode_copy_checkpoint,
                         R"({"id": 1, "trial": 3, "step": 6, "source": "/a", "if_missing": 1})"),
                 "COPY: 'if_missing'"));
  for (const auto how : {CopyCheckpoint::Clone::Stage, CopyCheckpoint::Clone::Staged}) {
    CopyCheckpoint staged = clone;
    staged.clone = how;
    BOOST_TEST((decode_copy_checkpoint(object(encode(staged))) == staged));
  }
  BOOST_TEST(has(refusal(decode_copy_checkpoint,
                         R"({"id": 1, "trial": 3, "step": 6, "donor": 2, "stage": "up"})"),
                 "COPY: 'stage' must be \"to\" or \"from\", not 'up'"));
  BOOST_TEST(has(refusal(decode_copy_checkpoint,
                         R"({"id": 1, "trial": 3, "step": 6, "source": "/a/b", "stage": "to"})"),
                 "COPY: 'stage' goes with 'donor' (a clone)"));
  BOOST_TEST(has(refusal(decode_copy_checkpoint, R"({"id": 1, "trial": 3, "step": 6})"),
                 "COPY: needs either 'source' (a keep) or 'donor' (a clone)"));
  BOOST_TEST(has(refusal(decode_copy_checkpoint,
                         R"({"id": 1, "trial": 3, "step": 6, "donor": 2, "source": "/a/b"})"),
                 "COPY: needs either"));
  BOOST_TEST(has(
      refusal(decode_copy_checkpoint, R"({"id": 1, "trial": 3, "step": 6, "source": "/a/../b"})"),
      "COPY: 'source' '/a/../b' must be an absolute path"));
  BOOST_TEST(
      has(refusal(decode_copy_checkpoint, R"({"id": 1, "trial": 3, "step": -1, "donor": 2})"),
          "COPY: 'step'"));
  BOOST_TEST(
      has(refusal(decode_copy_checkpoint, R"({"id": -1, "trial": 3, "step": 1, "donor": 2})"),
          "COPY: 'id' must be a whole number"));

  const CheckpointCopied made{4, "/local/n1/ckpt/trial-3/pbt-kept/step-6", 1024, "1.0 kB", {}};
  BOOST_TEST((decode_checkpoint_copied(object(encode(made))) == made));
  const CheckpointCopied failed{5, {}, 0, {}, "pbt: trial 7 has no kept checkpoint at step 6"};
  BOOST_TEST((decode_checkpoint_copied(object(encode(failed))) == failed));
  BOOST_TEST(has(refusal(decode_checkpoint_copied, R"({"id": 4, "path": "rel/x", "bytes": 1})"),
                 "COPIED: 'path' 'rel/x' must be an absolute path"));
  BOOST_TEST(has(refusal(decode_checkpoint_copied, R"({"id": 4, "path": "/a", "bytes": 0.5})"),
                 "COPIED: 'bytes' must be a whole number"));
}

BOOST_AUTO_TEST_CASE(exited_signal_and_leaving_refuse_out_of_range_fields) {
  BOOST_TEST(has(refusal(decode_exited, R"({"key": "1.0", "code": 256, "signal": 0})"),
                 "EXITED: 'code' must be a whole number from -1 to 255"));
  BOOST_TEST(has(refusal(decode_exited, R"({"key": "1.0", "code": 0, "signal": 0.5})"),
                 "EXITED: 'signal' must be a whole number from 0 to 128"));
  BOOST_TEST(has(refusal(decode_exited, R"({"key": "1.0", "code": 0, "signal": 0, "signaled": 1})"),
                 "EXITED: 'signaled' must be true or false"));
  BOOST_TEST(has(refusal(decode_exited, R"({"key": "x", "code": 0, "signal": 0})"),
                 "EXITED: 'key' must be TRIAL.ATTEMPT"));
  BOOST_TEST(has(refusal(decode_signal, R"({"key": "1.0", "signal": 0})"),
                 "SIGNAL: 'signal' must be a whole number from 1 to 64"));
  BOOST_TEST(has(refusal(decode_signal, R"({"key": "1.0", "signal": NaN})"), "SIGNAL: 'signal'"));
  BOOST_TEST(has(refusal(decode_leaving, R"({})"), "LEAVING: 'why' must be a string"));
  BOOST_TEST(has(refusal(decode_leaving, "{\"why\": \"" + std::string(2000, 'x') + "\"}"),
                 "at most 1024 are allowed"));
}
