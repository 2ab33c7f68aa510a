#define BOOST_TEST_MODULE runtime_control_server
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <set>

#include "protocol/credentials.hpp"
#include "protocol/route_messages.hpp"
#include "protocol/wire/mutual_auth.hpp"
#include "protocol/wire/secret.hpp"
#include "runtime/control/control_server.hpp"
#include "unit/runtime/control/loopback_client.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
using slurmtune::testing::connect_to;
using slurmtune::testing::error_text;
using slurmtune::testing::exchange_on;
using slurmtune::testing::hello_frame;

namespace {

// Stands in for the coordinator: welcomes trial 3, answers REPORT, refuses trial 9.
struct Handler final : ControlHandler {
  int hellos = 0, reports = 0, closed = 0;
  std::string on_hello(ConnectionId, const protocol::HelloFrom& hello) override {
    const auto* trial = std::get_if<protocol::TrialHello>(&hello);
    if (trial && trial->trial == 9) throw protocol::ProtocolError("trial 9 is not running");
    ++hellos;
    return R"({"trial": 3})";
  }
  std::optional<Reply> on_message(ConnectionId, protocol::MessageType type,
                                  const protocol::JsonObject&) override {
    if (type != protocol::MessageType::Report) throw protocol::ProtocolError("unexpected");
    ++reports;
    return Reply{protocol::MessageType::Decision, R"({"decision": "continue"})"};
  }
  void on_closed(ConnectionId, const std::string&) override { ++closed; }
};

struct Fixture {
  explicit Fixture(std::size_t max_unauthenticated = 128, double hello_timeout_s = 0.2,
                   std::size_t max_authenticated = 4096)
      : server(loop, handler, secret,
               ControlServerOptions{"127.0.0.1", 0, hello_timeout_s, max_unauthenticated,
                                    max_authenticated}) {}
  void pump(int rounds = 5) {
    for (int i = 0; i < rounds; ++i)
      loop.run_once(20);
  }
  protocol::UniqueFd connect() {
    protocol::UniqueFd fd = connect_to(server.port());
    pump();
    return fd;
  }
  std::pair<std::vector<protocol::Frame>, bool> exchange(int fd, const std::string& bytes) {
    return exchange_on(loop, fd, bytes);
  }
  // HELLO of attempt 0 of `trial` with its own credential.
  std::string hello(int trial = 3) const {
    return hello_frame(
        protocol::attempt_credential(secret, static_cast<core::TrialId>(trial), 0, 0), trial);
  }

  EventLoop loop;
  Handler handler;
  std::string secret = protocol::generate_token();  // the session's
  ControlServer server;
};

}  // namespace

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

// Peers that never say HELLO hold at most max_unauthenticated connections: each new one
// closes the oldest, and an authenticated connection is never closed for them.
struct SmallFixture : Fixture {
  SmallFixture() : Fixture(4) {}
};

BOOST_FIXTURE_TEST_CASE(connections_without_hello_are_capped_oldest_closed_first, SmallFixture) {
  const auto trial = connect();
  BOOST_TEST((exchange(trial.get(), hello()).first.at(0).type == protocol::MessageType::Welcome));
  std::vector<protocol::UniqueFd> idle;
  for (int i = 0; i < 10; ++i)
    idle.push_back(connect());
  pump();
  BOOST_TEST(server.stats().evicted == 6u);
  for (int i = 0; i < 10; ++i) {
    const auto [frames, closed] = exchange(idle[static_cast<std::size_t>(i)].get(), "");
    BOOST_TEST(closed == (i < 6), "idle connection " << i);
    // BUSY when evicted, never ERROR (which the clients take as final).
    BOOST_TEST(frames.size() == (i < 6 ? 1u : 0u), "idle connection " << i);
    for (const auto& frame : frames)
      BOOST_TEST((frame.type == protocol::MessageType::Busy), "idle connection " << i);
  }
  const auto [frames, closed] = exchange(
      trial.get(),
      protocol::encode_frame(protocol::MessageType::Report, R"({"step": 1, "metrics": {}})"));
  BOOST_TEST(!closed);
  BOOST_TEST((frames.at(0).type == protocol::MessageType::Decision));
}

// Issue #41 (3): a client that pipelines requests without reading the replies is closed
// once they pass kMaxOutbox (the coordinator grew from 22 MB to 489 MB in 6 s).
BOOST_FIXTURE_TEST_CASE(a_client_that_never_reads_its_replies_is_closed, Fixture) {
  // A small receive buffer, set before connecting: the kernel holds little of the replies.
  protocol::UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  const int small = 4096;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(server.port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  BOOST_REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  pump();
  BOOST_TEST((exchange(fd.get(), hello()).first.at(0).type == protocol::MessageType::Welcome));
  const std::string report =
      protocol::encode_frame(protocol::MessageType::Report, R"({"step": 1, "metrics": {}})");
  std::string burst;
  for (int i = 0; i < 2000; ++i)
    burst += report;
  ::fcntl(fd.get(), F_SETFL, O_NONBLOCK);
  // Bounded in bytes and in turns: the test ends even if the cap never trips, or the
  // server stops reading and every send says EAGAIN.
  std::size_t sent_total = 0;
  for (int turn = 0;
       turn < 20000 && server.stats().unread == 0 && sent_total < (std::size_t{256} << 20);
       ++turn) {
    const ssize_t sent = ::send(fd.get(), burst.data(), burst.size(), MSG_NOSIGNAL);
    if (sent > 0) sent_total += static_cast<std::size_t>(sent);
    if (sent < 0 && errno != EAGAIN) break;
    pump(1);
  }
  BOOST_TEST(server.stats().unread == 1u);
  BOOST_TEST(handler.closed == 1);  // the study is told, as for any closed connection
}

// At most max_authenticated connections: a HELLO past it is told BUSY (the client tries
// again when it says) and the others are untouched.
struct TwoConnectionsFixture : Fixture {
  TwoConnectionsFixture() : Fixture(128, 5, 2) {}
};

BOOST_FIXTURE_TEST_CASE(authenticated_connections_are_capped, TwoConnectionsFixture) {
  std::vector<protocol::UniqueFd> fds;
  std::vector<std::pair<std::vector<protocol::Frame>, bool>> answers;
  for (int i = 0; i < 3; ++i) {
    fds.push_back(connect());
    answers.push_back(exchange(fds.back().get(), hello()));
  }
  BOOST_TEST(handler.hellos == 2);
  BOOST_TEST(server.stats().over_capacity == 1u);
  BOOST_TEST(!answers[1].second);
  BOOST_TEST(answers[2].second);  // closed, with BUSY and not ERROR
  BOOST_REQUIRE(answers[2].first.size() == 1u);
  BOOST_TEST((answers[2].first[0].type == protocol::MessageType::Busy));
  const auto busy = protocol::decode_busy(protocol::payload_object(answers[2].first[0]));
  BOOST_TEST(busy.retry_after_s == kBusyRetryS);
  BOOST_TEST(busy.why == "2 connections are open already");
}

namespace {
// A running trial's reporter: trial 5 runs its launch 1.
struct RunningTrialHandler final : ControlHandler {
  int hellos = 0;
  std::string on_hello(ConnectionId, const protocol::HelloFrom&) override {
    ++hellos;
    return "{}";
  }
  std::optional<Reply> on_message(ConnectionId, protocol::MessageType,
                                  const protocol::JsonObject&) override {
    return std::nullopt;
  }
  void on_closed(ConnectionId, const std::string&) override {}
  protocol::AttemptGrant attempt_grant(core::TrialId trial) const override {
    return {trial == 5 ? 1U : 0U, ""};
  }
};
}  // namespace

// Past the cap, a running trial's rank 0 is still admitted (a reserve of a quarter more):
// ranks that only ask and leftover processes cannot keep a trial from reporting.
BOOST_AUTO_TEST_CASE(a_running_trials_reporter_uses_the_reserve) {
  EventLoop loop;
  RunningTrialHandler handler;
  const std::string secret = protocol::generate_token();
  ControlServer server(loop, handler, secret, ControlServerOptions{"127.0.0.1", 0, 5, 128, 4});
  const auto hello_of = [&](core::TrialId trial, std::int64_t rank) {
    return protocol::encode_frame(
        protocol::MessageType::Hello,
        R"({"token": ")" +
            protocol::attempt_credential(secret, trial, 0, handler.attempt_grant(trial).launch) +
            R"(", "trial": )" + std::to_string(trial) + R"(, "attempt": 0, "rank": )" +
            std::to_string(rank) + "}");
  };
  std::vector<protocol::UniqueFd> fds;
  const auto say = [&](const std::string& hello) {
    protocol::UniqueFd fd = connect_to(server.port());
    exchange_on(loop, fd.get(), hello);
    fds.push_back(std::move(fd));
  };
  for (int i = 0; i < 4; ++i)
    say(hello_of(6, 1));  // not running: no reserve
  say(hello_of(6, 1));
  BOOST_TEST(handler.hellos == 4);
  BOOST_TEST(server.stats().over_capacity == 1u);
  say(hello_of(5, 0));  // the running trial's reporter
  BOOST_TEST(handler.hellos == 5);
  say(hello_of(5, 1));  // one of its ranks that only ask
  BOOST_TEST(handler.hellos == 5);
  BOOST_TEST(server.stats().over_capacity == 2u);
}

namespace {
// Lowers this process's descriptor limit for one test and restores it.
class DescriptorLimit {
 public:
  explicit DescriptorLimit(rlim_t soft) {
    BOOST_REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved_) == 0);
    rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    BOOST_REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  }
  ~DescriptorLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  rlimit saved_{};
};

// A descriptor limit that leaves `free` descriptors to open (new ones take the lowest
// free numbers, and the environment may hold high ones).
rlim_t limit_leaving(int free) {
  std::set<int> open;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    open.insert(std::stoi(entry.path().filename().string()));
  int limit = 0;
  for (int left = free; left > 0; ++limit)
    if (!open.contains(limit)) --left;
  return static_cast<rlim_t>(limit);
}
}  // namespace

// Idle connections stay for the whole test (no hello timeout frees their descriptors).
struct PatientFixture : Fixture {
  PatientFixture() : Fixture(128, 60) {}
  // A new client socket connected to the server (no HELLO yet), or none when this
  // process has no descriptor left for it.
  protocol::UniqueFd dial() {
    protocol::UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
    if (!fd) return fd;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(server.port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    return fd;
  }
};

// When accept() fails for want of descriptors and every connection is authenticated,
// the listener stays ready (level-triggered epoll): the server must stop watching it
// rather than spin, and accept the waiting peer once a descriptor is free.
BOOST_FIXTURE_TEST_CASE(descriptor_exhaustion_pauses_accepting_without_spinning, PatientFixture) {
  std::vector<protocol::UniqueFd> clients;
  {
    const DescriptorLimit limit(limit_leaving(16));
    // Each client costs two descriptors here (its socket and the accepted one).
    while (server.stats().accept_failures == 0 && clients.size() < 64) {
      protocol::UniqueFd fd = dial();
      BOOST_REQUIRE(fd);
      const std::string bytes = hello();
      ::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
      clients.push_back(std::move(fd));
      for (int i = 0; i < 3; ++i)
        loop.run_once(20);
    }
    BOOST_REQUIRE(server.stats().accept_failures >= 1u);
    BOOST_TEST(server.stats().accept_pauses == 1u);
    BOOST_TEST(server.stats().evicted == 0u);  // every connection said HELLO
    // One second of the coordinator's loop: a spinning listener would run its callback
    // thousands of times; a paused one is tried again twice a second.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    int callbacks = 0;
    while (std::chrono::steady_clock::now() < until) {
      callbacks += loop.run_once(100);
      server.tick();
    }
    BOOST_TEST(callbacks <= 10);
    BOOST_TEST(server.stats().accept_failures <= 5u);
  }
  // Two clients leave: their descriptors free, and the waiting peer is welcomed.
  clients.erase(clients.begin(), clients.begin() + 2);
  const auto [frames, closed] = exchange(clients.back().get(), "");
  BOOST_TEST(!closed);
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST((frames[0].type == protocol::MessageType::Welcome));
}

// Out of descriptors with idle peers connected: the oldest idle one makes room.
BOOST_FIXTURE_TEST_CASE(idle_peers_make_room_when_descriptors_run_out, PatientFixture) {
  std::vector<protocol::UniqueFd> idle;
  const DescriptorLimit limit(limit_leaving(16));
  while (server.stats().evicted == 0 && idle.size() < 64) {
    protocol::UniqueFd fd = dial();
    if (!fd) {  // this process's own end ran out first: one idle peer leaves
      idle.erase(idle.begin() + static_cast<std::ptrdiff_t>(idle.size() / 2));
      pump();
      continue;
    }
    idle.push_back(std::move(fd));
    pump(2);
  }
  BOOST_TEST(server.stats().evicted >= 1u);
  BOOST_TEST(server.stats().accept_pauses == 0u);
  BOOST_TEST(exchange(idle.front().get(), "").second);  // the oldest was closed
  const auto [frames, closed] = exchange(idle.back().get(), hello());
  BOOST_TEST(!closed);
  BOOST_TEST((frames.at(0).type == protocol::MessageType::Welcome));
}

BOOST_AUTO_TEST_CASE(a_throttled_log_keeps_a_burst_per_interval_and_counts_the_rest) {
  ThrottledLog log("test", 3, std::chrono::seconds(10));
  const auto start = ThrottledLog::Clock::now();
  int written = 0;
  for (int i = 0; i < 1000; ++i)
    written += log.line("refused", start + std::chrono::milliseconds(i)) ? 1 : 0;
  BOOST_TEST(written == 3);
  BOOST_TEST(log.left_out() == 997u);
  BOOST_TEST(log.line("refused", start + std::chrono::seconds(11)));
}

BOOST_FIXTURE_TEST_CASE(refusals_of_valid_credentials_are_logged_throttled, Fixture) {
  // A leftover process in a reconnect loop: a valid credential, a HELLO the study refuses
  // (trial 9 is not running). 40 tries make at most 10 lines in 10 s, not 40.
  for (int i = 0; i < 40; ++i) {
    const auto fd = connect();
    const auto [frames, closed] = exchange(fd.get(), hello(9));
    BOOST_REQUIRE(!frames.empty());
    BOOST_TEST(error_text(frames.back()) == "trial 9 is not running");
    BOOST_TEST(closed);
  }
  BOOST_TEST(server.stats().peer_lines_left_out >= 30u);
  BOOST_TEST(handler.hellos == 0);
}
