#pragma once
// The control server's test fixture, shared by test_control_server.cpp (authentication)
// and test_control_server_limits.cpp (what bounds each peer): a server on loopback with a
// handler that stands in for the coordinator, and the HELLO of an attempt.
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "protocol/credentials.hpp"
#include "protocol/wire/secret.hpp"
#include "runtime/control/control_server.hpp"
#include "unit/runtime/control/loopback_client.hpp"

namespace slurmtune::testing {

// Stands in for the coordinator: welcomes trial 3, answers REPORT, refuses trial 9.
struct StandInHandler final : runtime::ControlHandler {
  int hellos = 0, reports = 0, closed = 0;
  std::string on_hello(runtime::ConnectionId, const protocol::HelloFrom& hello) override {
    const auto* trial = std::get_if<protocol::TrialHello>(&hello);
    if (trial && trial->trial == 9) throw protocol::ProtocolError("trial 9 is not running");
    ++hellos;
    return R"({"trial": 3})";
  }
  std::optional<runtime::Reply> on_message(runtime::ConnectionId, protocol::MessageType type,
                                           const protocol::JsonObject&) override {
    if (type != protocol::MessageType::Report) throw protocol::ProtocolError("unexpected");
    ++reports;
    return runtime::Reply{protocol::MessageType::Decision, R"({"decision": "continue"})"};
  }
  void on_closed(runtime::ConnectionId, const std::string&) override { ++closed; }
};

struct ControlServerFixture {
  explicit ControlServerFixture(std::size_t max_unauthenticated = 128, double hello_timeout_s = 0.2,
                                std::size_t max_authenticated = 4096)
      : server(loop, handler, secret,
               runtime::ControlServerOptions{"127.0.0.1", 0, hello_timeout_s, max_unauthenticated,
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

  runtime::EventLoop loop;
  StandInHandler handler;
  std::string secret = protocol::generate_token();  // the session's
  runtime::ControlServer server;
};

}  // namespace slurmtune::testing
