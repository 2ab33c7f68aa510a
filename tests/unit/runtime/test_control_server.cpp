#define BOOST_TEST_MODULE runtime_control_server
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <boost/test/unit_test.hpp>

#include "runtime/control_server.hpp"
#include "runtime/mutual_auth.hpp"
#include "runtime/secret.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;

namespace {

// Stands in for the coordinator: welcomes trial 3, answers REPORT, refuses trial 9.
struct Handler final : ControlHandler {
  int hellos = 0, reports = 0, closed = 0;
  std::string on_hello(ConnectionId, const core::JsonObject& hello) override {
    if (std::get<double>(hello.at("trial").data) == 9)
      throw ProtocolError("trial 9 is not running");
    ++hellos;
    return R"({"trial": 3})";
  }
  std::optional<Reply> on_message(ConnectionId, MessageType type,
                                  const core::JsonObject&) override {
    if (type != MessageType::Report) throw ProtocolError("unexpected");
    ++reports;
    return Reply{MessageType::Decision, R"({"decision": "continue"})"};
  }
  void on_closed(ConnectionId, const std::string&) override { ++closed; }
};

struct Fixture {
  Fixture() : server(loop, handler, token, ControlServerOptions{"127.0.0.1", 0, 0.2}) {}
  void pump(int rounds = 5) {
    for (int i = 0; i < rounds; ++i)
      loop.run_once(20);
  }
  UniqueFd connect() {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(server.port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    timeval timeout{2, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    pump();
    return fd;
  }
  // Sends bytes, lets the server work, returns every frame it answered and whether it
  // closed the connection.
  std::pair<std::vector<Frame>, bool> exchange(int fd, const std::string& bytes) {
    if (!bytes.empty()) ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    pump();
    FrameDecoder decoder;
    std::vector<Frame> frames;
    char buffer[4096];
    bool closed = false;
    for (;;) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n == 0) closed = true;
      if (n <= 0) break;
      decoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    }
    while (auto f = decoder.next())
      frames.push_back(*f);
    return {frames, closed};
  }
  std::string hello(const std::string& t, int trial = 3) {
    return encode_frame(MessageType::Hello,
                        R"({"token": ")" + t + R"(", "trial": )" + std::to_string(trial) + "}");
  }

  EventLoop loop;
  Handler handler;
  std::string token = generate_token();
  ControlServer server;
};

std::string error_text(const Frame& f) {
  return std::get<std::string>(payload_object(f).at("error").data);
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(the_right_token_is_welcomed_and_reports_are_answered, Fixture) {
  const auto fd = connect();
  auto [frames, closed] = exchange(fd.get(), hello(token));
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST((frames[0].type == MessageType::Welcome));
  BOOST_TEST(!closed);
  std::tie(frames, closed) =
      exchange(fd.get(), encode_frame(MessageType::Report, R"({"step": 1, "metrics": {}})"));
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST((frames[0].type == MessageType::Decision));
  BOOST_TEST(handler.reports == 1);
  BOOST_TEST(server.stats().authenticated == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_wrong_token_is_refused_and_never_reaches_the_study, Fixture) {
  const auto fd = connect();
  std::string wrong = token;
  wrong[10] = wrong[10] == 'a' ? 'b' : 'a';
  const auto [frames, closed] = exchange(fd.get(), hello(wrong));
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST(error_text(frames[0]) == "wrong or missing token");
  BOOST_TEST(closed);
  BOOST_TEST(handler.hellos == 0);
  BOOST_TEST(handler.closed == 0);  // never authenticated: the study never knew it
}

BOOST_FIXTURE_TEST_CASE(anything_but_hello_first_is_refused, Fixture) {
  const auto fd = connect();
  const auto [frames, closed] =
      exchange(fd.get(), encode_frame(MessageType::Report, R"({"step": 1, "metrics": {}})"));
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
  header += static_cast<char>(kProtocolVersion);
  header += static_cast<char>(MessageType::Hello);
  header += std::string("\x7f\xff\xff\xff", 4);
  const auto [frames, closed] = exchange(fd.get(), header);
  BOOST_TEST(closed);
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST(error_text(frames[0]).find("exceeds") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(an_unknown_message_type_is_refused, Fixture) {
  const auto fd = connect();
  exchange(fd.get(), hello(token));
  std::string frame = encode_frame(MessageType::Ask, "{}");
  frame[3] = 42;
  const auto [frames, closed] = exchange(fd.get(), frame);
  BOOST_TEST(closed);
  BOOST_TEST(handler.closed == 1);
}

BOOST_FIXTURE_TEST_CASE(a_silent_client_is_closed_after_the_hello_timeout, Fixture) {
  const auto fd = connect();
  ::usleep(300'000);
  server.expire_silent();
  const auto [frames, closed] = exchange(fd.get(), "");
  BOOST_TEST(closed);
  BOOST_TEST(handler.hellos == 0);
}

BOOST_FIXTURE_TEST_CASE(the_handler_refusing_a_hello_closes_only_that_connection, Fixture) {
  const auto bad = connect();
  const auto good = connect();
  auto [frames, closed] = exchange(bad.get(), hello(token, 9));
  BOOST_TEST(closed);
  BOOST_TEST(error_text(frames.at(0)) == "trial 9 is not running");
  std::tie(frames, closed) = exchange(good.get(), hello(token));
  BOOST_TEST(!closed);
  BOOST_TEST((frames.at(0).type == MessageType::Welcome));
}

// Mutual authentication: the server proves the token first, then the client; neither
// sends it. A wrong proof, a PROOF out of turn and a short nonce are refused.
namespace {
std::string challenge_hello(const std::string& nonce) {
  return encode_frame(MessageType::Hello, R"({"challenge": ")" + nonce + R"(", "trial": 3})");
}
std::string body_text(const Frame& f, const char* name) {
  return std::get<std::string>(payload_object(f).at(name).data);
}
}  // namespace

BOOST_FIXTURE_TEST_CASE(a_challenge_is_answered_with_a_proof_and_a_right_proof_welcomed, Fixture) {
  const auto fd = connect();
  const std::string nonce = generate_token();
  auto [frames, closed] = exchange(fd.get(), challenge_hello(nonce));
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_REQUIRE((frames[0].type == MessageType::Challenge));
  const std::string server_nonce = body_text(frames[0], "nonce");
  BOOST_TEST(body_text(frames[0], "proof") == coordinator_proof(token, nonce, server_nonce));
  BOOST_TEST(handler.hellos == 0);  // not before the client's proof
  std::tie(frames, closed) =
      exchange(fd.get(),
               encode_frame(MessageType::Proof,
                            R"({"proof": ")" + worker_proof(token, server_nonce, nonce) + R"("})"));
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST((frames[0].type == MessageType::Welcome));
  BOOST_TEST(!closed);
  BOOST_TEST(handler.hellos == 1);
}

BOOST_FIXTURE_TEST_CASE(a_wrong_proof_or_a_message_out_of_turn_is_refused, Fixture) {
  {
    const auto fd = connect();
    const std::string nonce = generate_token();
    auto [frames, closed] = exchange(fd.get(), challenge_hello(nonce));
    BOOST_REQUIRE(frames.size() == 1u);
    const std::string server_nonce = body_text(frames[0], "nonce");
    // The coordinator's own proof reflected back is not the worker's.
    std::tie(frames, closed) = exchange(
        fd.get(), encode_frame(MessageType::Proof,
                               R"({"proof": ")" + body_text(frames[0], "proof") + R"("})"));
    BOOST_REQUIRE(frames.size() == 1u);
    BOOST_TEST(error_text(frames[0]) == "wrong or missing proof of the token");
    BOOST_TEST(closed);
  }
  {
    const auto fd = connect();
    auto [frames, closed] = exchange(fd.get(), challenge_hello(generate_token()));
    std::tie(frames, closed) =
        exchange(fd.get(), encode_frame(MessageType::Report, R"({"step": 1, "metrics": {}})"));
    BOOST_REQUIRE(frames.size() == 1u);
    BOOST_TEST(error_text(frames[0]) == "after CHALLENGE came REPORT, not PROOF");
    BOOST_TEST(closed);
  }
  {
    const auto fd = connect();
    const auto [frames, closed] = exchange(fd.get(), challenge_hello("0123"));
    BOOST_REQUIRE(frames.size() == 1u);
    BOOST_TEST(error_text(frames[0]) == "HELLO: \"challenge\" must have 32 to 128 characters");
    BOOST_TEST(closed);
  }
  BOOST_TEST(handler.hellos == 0);
}

BOOST_FIXTURE_TEST_CASE(a_challenge_left_unproven_times_out, Fixture) {
  const auto fd = connect();
  auto [frames, closed] = exchange(fd.get(), challenge_hello(generate_token()));
  BOOST_REQUIRE(frames.size() == 1u);
  for (int i = 0; i < 20 && !closed; ++i) {
    server.expire_silent();
    std::tie(frames, closed) = exchange(fd.get(), "");
  }
  BOOST_TEST(closed);
  BOOST_TEST(handler.hellos == 0);
}
