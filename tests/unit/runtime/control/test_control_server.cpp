#define BOOST_TEST_MODULE runtime_control_server
#include <boost/test/unit_test.hpp>

#include "protocol/route_messages.hpp"
#include "protocol/wire/mutual_auth.hpp"
#include "unit/runtime/control/control_server_fixture.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
using Fixture = slurmtune::testing::ControlServerFixture;
using slurmtune::testing::error_text;
using slurmtune::testing::hello_frame;

BOOST_FIXTURE_TEST_CASE(the_right_token_is_welcomed_and_reports_are_answered, Fixture) {
  const auto fd = connect();
  auto [frames, closed] = exchange(fd.get(), hello());
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST((frames[0].type == protocol::MessageType::Welcome));
  BOOST_TEST(!closed);
  std::tie(frames, closed) = exchange(
      fd.get(),
      protocol::encode_frame(protocol::MessageType::Report, R"({"step": 1, "metrics": {}})"));
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST((frames[0].type == protocol::MessageType::Decision));
  BOOST_TEST(handler.reports == 1);
  BOOST_TEST(server.stats().authenticated == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_wrong_token_is_refused_and_never_reaches_the_study, Fixture) {
  const auto fd = connect();
  std::string wrong = protocol::attempt_credential(secret, 3, 0, 0);
  wrong[10] = wrong[10] == 'a' ? 'b' : 'a';
  const auto [frames, closed] = exchange(fd.get(), hello_frame(wrong));
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST(error_text(frames[0]) == "wrong or missing credential for trial 3, attempt 0");
  BOOST_TEST(closed);
  BOOST_TEST(handler.hellos == 0);
  BOOST_TEST(handler.closed == 0);  // never authenticated: the study never knew it
}

BOOST_FIXTURE_TEST_CASE(anything_but_hello_first_is_refused, Fixture) {
  const auto fd = connect();
  const auto [frames, closed] = exchange(
      fd.get(),
      protocol::encode_frame(protocol::MessageType::Report, R"({"step": 1, "metrics": {}})"));
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST(error_text(frames[0]).find("not HELLO") != std::string::npos);
  BOOST_TEST(closed);
  BOOST_TEST(handler.reports == 0);
}

BOOST_FIXTURE_TEST_CASE(garbage_bytes_close_the_connection, Fixture) {
  const auto fd = connect();
  const auto [frames, closed] = exchange(fd.get(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  BOOST_TEST(closed);
  BOOST_TEST(server.stats().refused == 1u);
}

BOOST_FIXTURE_TEST_CASE(an_oversized_frame_is_refused_from_its_header, Fixture) {
  const auto fd = connect();
  std::string header = "ST";
  header += static_cast<char>(protocol::kProtocolVersion);
  header += static_cast<char>(protocol::MessageType::Hello);
  header += std::string("\x7f\xff\xff\xff", 4);
  const auto [frames, closed] = exchange(fd.get(), header);
  BOOST_TEST(closed);
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST(error_text(frames[0]).find("exceeds") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(an_unknown_message_type_is_refused, Fixture) {
  const auto fd = connect();
  exchange(fd.get(), hello());
  std::string frame = protocol::encode_frame(protocol::MessageType::Ask, "{}");
  frame[3] = 42;
  const auto [frames, closed] = exchange(fd.get(), frame);
  BOOST_TEST(closed);
  BOOST_TEST(handler.closed == 1);
}

// Closed with BUSY, not ERROR (issue #41, item 4; #61): both clients take ERROR as
// final, and a client closed for time or room connects again when BUSY says.
BOOST_FIXTURE_TEST_CASE(a_silent_client_is_closed_after_the_hello_timeout, Fixture) {
  const auto fd = connect();
  ::usleep(300'000);
  server.tick();
  const auto [frames, closed] = exchange(fd.get(), "");
  BOOST_TEST(closed);
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST((frames[0].type == protocol::MessageType::Busy));
  BOOST_TEST(protocol::decode_busy(protocol::payload_object(frames[0])).why ==
             "no HELLO within 0.2 s");
  BOOST_TEST(handler.hellos == 0);
}

BOOST_FIXTURE_TEST_CASE(the_handler_refusing_a_hello_closes_only_that_connection, Fixture) {
  const auto bad = connect();
  const auto good = connect();
  auto [frames, closed] = exchange(bad.get(), hello(9));
  BOOST_TEST(closed);
  BOOST_TEST(error_text(frames.at(0)) == "trial 9 is not running");
  std::tie(frames, closed) = exchange(good.get(), hello());
  BOOST_TEST(!closed);
  BOOST_TEST((frames.at(0).type == protocol::MessageType::Welcome));
}

// Issue #41, item 1: a credential covers exactly the trial and attempt, the MPI step or
// the worker it was derived for. Trial 0's credential (what trial 0 holds) claims trial
// 1, another attempt of trial 0, a group step and a worker in vain; the study's secret
// itself opens only a joined job's worker.
BOOST_FIXTURE_TEST_CASE(a_credential_speaks_only_for_what_it_was_given_for, Fixture) {
  const std::string own = protocol::attempt_credential(secret, 0, 0, 0);
  const auto refused = [this](const std::string& frame) {
    const auto fd = connect();
    const auto [frames, closed] = exchange(fd.get(), frame);
    return frames.size() == 1 && frames[0].type == protocol::MessageType::Error && closed
               ? error_text(frames[0])
               : std::string("(not refused)");
  };
  BOOST_TEST(refused(hello_frame(own, 1)) == "wrong or missing credential for trial 1, attempt 0");
  BOOST_TEST(
      refused(protocol::encode_frame(protocol::MessageType::Hello,
                                     R"({"token": ")" + own + R"(", "trial": 0, "attempt": 1})")) ==
      "wrong or missing credential for trial 0, attempt 1");
  BOOST_TEST(refused(protocol::encode_frame(
                 protocol::MessageType::Hello,
                 R"({"token": ")" + own + R"(", "group": 1, "ranks": 2, "step": 1})")) ==
             "wrong or missing credential for group step 1");
  // A group step's credential is its own step's only.
  BOOST_TEST(
      refused(protocol::encode_frame(protocol::MessageType::Hello,
                                     R"({"token": ")" + protocol::group_step_credential(secret, 1) +
                                         R"(", "group": 1, "ranks": 2, "step": 2})")) ==
      "wrong or missing credential for group step 2");
  BOOST_TEST(handler.hellos == 0);
  // Each of these is welcomed with its own credential.
  const auto welcomed = [this](const std::string& frame) {
    const auto fd = connect();
    const auto [frames, closed] = exchange(fd.get(), frame);
    return frames.size() == 1 && frames[0].type == protocol::MessageType::Welcome && !closed;
  };
  BOOST_TEST(welcomed(hello_frame(own, 0)));
  BOOST_TEST(welcomed(protocol::encode_frame(
      protocol::MessageType::Hello, R"({"token": ")" + protocol::group_step_credential(secret, 2) +
                                        R"(", "group": 1, "ranks": 2, "step": 2})")));
  BOOST_TEST(handler.hellos == 2);
}

// A worker proves its node's credential, a joined job's worker the secret: the
// coordinator's proof tells each which key it used, and another key's proof is refused.
BOOST_FIXTURE_TEST_CASE(workers_prove_their_own_credential_and_joined_ones_the_secret, Fixture) {
  const std::string nonce = protocol::generate_token();
  const auto proof_of = [&](const std::string& hello_fields, const std::string& key) {
    const auto fd = connect();
    auto [frames, closed] = exchange(
        fd.get(),
        protocol::encode_frame(protocol::MessageType::Hello,
                               R"({"challenge": ")" + nonce + R"(", )" + hello_fields + "}"));
    BOOST_REQUIRE(frames.size() == 1u);
    const auto body = protocol::payload_object(frames[0]);
    const std::string server_nonce = std::get<std::string>(body.at("nonce").data);
    const bool coordinator_used_key = std::get<std::string>(body.at("proof").data) ==
                                      protocol::coordinator_proof(key, nonce, server_nonce);
    std::tie(frames, closed) = exchange(
        fd.get(),
        protocol::encode_frame(
            protocol::MessageType::Proof,
            R"({"proof": ")" + protocol::worker_proof(key, server_nonce, nonce) + R"("})"));
    return std::make_pair(coordinator_used_key,
                          frames.size() == 1 && frames[0].type == protocol::MessageType::Welcome);
  };
  const std::string worker = R"("worker": "n3")";
  const std::string joined = R"("worker": "m1", "allocation": "42", "cpus": 1, "gpus": 0)";
  BOOST_TEST(
      (proof_of(worker, protocol::worker_credential(secret, "n3")) == std::make_pair(true, true)));
  BOOST_TEST((proof_of(worker, protocol::worker_credential(secret, "n4")) ==
              std::make_pair(false, false)));
  BOOST_TEST((proof_of(worker, secret) == std::make_pair(false, false)));
  BOOST_TEST((proof_of(joined, secret) == std::make_pair(true, true)));
  BOOST_TEST((proof_of(joined, protocol::worker_credential(secret, "m1")) ==
              std::make_pair(false, false)));
}

// Mutual authentication: the server proves the token first, then the client; neither
// sends it. A wrong proof, a PROOF out of turn and a short nonce are refused.
namespace {
std::string challenge_hello(const std::string& nonce) {
  return protocol::encode_frame(protocol::MessageType::Hello,
                                R"({"challenge": ")" + nonce + R"(", "trial": 3, "attempt": 0})");
}
std::string body_text(const protocol::Frame& f, const char* name) {
  return std::get<std::string>(protocol::payload_object(f).at(name).data);
}
}  // namespace

BOOST_FIXTURE_TEST_CASE(a_challenge_is_answered_with_a_proof_and_a_right_proof_welcomed, Fixture) {
  const auto fd = connect();
  const std::string nonce = protocol::generate_token();
  auto [frames, closed] = exchange(fd.get(), challenge_hello(nonce));
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_REQUIRE((frames[0].type == protocol::MessageType::Challenge));
  const std::string server_nonce = body_text(frames[0], "nonce");
  // Both proofs are of the credential of what the HELLO claims (trial 3, attempt 0).
  const std::string key = protocol::attempt_credential(secret, 3, 0, 0);
  BOOST_TEST(body_text(frames[0], "proof") ==
             protocol::coordinator_proof(key, nonce, server_nonce));
  BOOST_TEST(handler.hellos == 0);  // not before the client's proof
  std::tie(frames, closed) = exchange(
      fd.get(), protocol::encode_frame(
                    protocol::MessageType::Proof,
                    R"({"proof": ")" + protocol::worker_proof(key, server_nonce, nonce) + R"("})"));
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST((frames[0].type == protocol::MessageType::Welcome));
  BOOST_TEST(!closed);
  BOOST_TEST(handler.hellos == 1);
}

BOOST_FIXTURE_TEST_CASE(a_wrong_proof_or_a_message_out_of_turn_is_refused, Fixture) {
  {
    const auto fd = connect();
    const std::string nonce = protocol::generate_token();
    auto [frames, closed] = exchange(fd.get(), challenge_hello(nonce));
    BOOST_REQUIRE(frames.size() == 1u);
    const std::string server_nonce = body_text(frames[0], "nonce");
    // The coordinator's own proof reflected back is not the worker's.
    std::tie(frames, closed) = exchange(
        fd.get(),
        protocol::encode_frame(protocol::MessageType::Proof,
                               R"({"proof": ")" + body_text(frames[0], "proof") + R"("})"));
    BOOST_REQUIRE(frames.size() == 1u);
    BOOST_TEST(error_text(frames[0]) == "wrong proof of the credential for trial 3, attempt 0");
    BOOST_TEST(closed);
  }
  {
    const auto fd = connect();
    auto [frames, closed] = exchange(fd.get(), challenge_hello(protocol::generate_token()));
    std::tie(frames, closed) = exchange(
        fd.get(),
        protocol::encode_frame(protocol::MessageType::Report, R"({"step": 1, "metrics": {}})"));
    BOOST_REQUIRE(frames.size() == 1u);
    BOOST_TEST(error_text(frames[0]) == "after CHALLENGE came REPORT, not PROOF");
    BOOST_TEST(closed);
  }
  {
    const auto fd = connect();
    const auto [frames, closed] = exchange(fd.get(), challenge_hello("0123"));
    BOOST_REQUIRE(frames.size() == 1u);
    BOOST_TEST(error_text(frames[0]) == "HELLO: 'challenge' must have 32 to 128 characters");
    BOOST_TEST(closed);
  }
  {
    const auto fd = connect();
    auto [frames, closed] = exchange(fd.get(), challenge_hello(protocol::generate_token()));
    std::tie(frames, closed) = exchange(
        fd.get(), protocol::encode_frame(protocol::MessageType::Proof, R"({"proof": "not hex"})"));
    BOOST_REQUIRE(frames.size() == 1u);
    BOOST_TEST(error_text(frames[0]) == "PROOF: 'proof' must be 64 lowercase hex digits");
    BOOST_TEST(closed);
  }
  BOOST_TEST(handler.hellos == 0);
}

BOOST_FIXTURE_TEST_CASE(a_challenge_left_unproven_times_out, Fixture) {
  const auto fd = connect();
  auto [frames, closed] = exchange(fd.get(), challenge_hello(protocol::generate_token()));
  BOOST_REQUIRE(frames.size() == 1u);
  for (int i = 0; i < 20 && !closed; ++i) {
    server.tick();
    std::tie(frames, closed) = exchange(fd.get(), "");
  }
  BOOST_TEST(closed);
  BOOST_TEST(handler.hellos == 0);
}
