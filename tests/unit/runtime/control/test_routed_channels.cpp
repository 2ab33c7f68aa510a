#define BOOST_TEST_MODULE runtime_routed_channels
// Node agents at the control server: an agent's one connection carries its trials'
// connections as channels, each checked as a connection of its own.
#include <boost/test/unit_test.hpp>
#include <set>
#include <string>
#include <vector>

#include "protocol/credentials.hpp"
#include "protocol/route_messages.hpp"
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
// Node agents: trial 7's connection stands in for an agent (it may route); an agent may
// not carry trial 8 (not on its node).
struct RoutingHandler final : ControlHandler {
  std::set<ConnectionId> agents;
  std::vector<ConnectionId> closed;
  int reports = 0;
  std::string on_hello(ConnectionId id, const protocol::HelloFrom& hello) override {
    if (std::get<protocol::TrialHello>(hello).trial == 7) agents.insert(id);
    return "{}";
  }
  std::optional<Reply> on_message(ConnectionId, protocol::MessageType,
                                  const protocol::JsonObject&) override {
    ++reports;
    return Reply{protocol::MessageType::Decision, R"({"decision": "continue"})"};
  }
  void on_closed(ConnectionId id, const std::string&) override { closed.push_back(id); }
  bool routes(ConnectionId id) const override { return agents.contains(id); }
  void check_routed(ConnectionId, const protocol::HelloFrom& hello) const override {
    if (std::get<protocol::TrialHello>(hello).trial == 8)
      throw protocol::ProtocolError("trial 8 does not run on this agent's node");
  }
};

struct RoutingFixture {
  RoutingFixture()
      : server(loop, handler, secret, ControlServerOptions{"127.0.0.1", 0, 5, 128, 4096, 3}) {}
  std::string hello(int trial) const {
    return hello_frame(
        protocol::attempt_credential(secret, static_cast<core::TrialId>(trial), 0, 0), trial);
  }
  // A connection welcomed as an agent.
  protocol::UniqueFd agent() {
    protocol::UniqueFd fd = connect_to(server.port());
    const auto [frames, closed] = exchange(fd.get(), hello(7));
    BOOST_REQUIRE(frames.size() == 1u);
    BOOST_REQUIRE((frames[0].type == protocol::MessageType::Welcome));
    return fd;
  }
  std::pair<std::vector<protocol::Frame>, bool> exchange(int fd, const std::string& bytes) {
    return exchange_on(loop, fd, bytes);
  }
  static std::string routed(std::uint64_t channel, const std::string& frame) {
    return protocol::encode_routed(channel, frame);
  }

  EventLoop loop;
  RoutingHandler handler;
  std::string secret = protocol::generate_token();
  ControlServer server;
};

protocol::Routed inner(const protocol::Frame& f) {
  BOOST_REQUIRE((f.type == protocol::MessageType::Routed));
  return protocol::decode_routed(f);
}
}  // namespace

// A channel is a connection like any other: its HELLO checked with the same credentials,
// its messages answered inside ROUTED, on the agent's one connection.
BOOST_FIXTURE_TEST_CASE(an_agent_carries_its_trials_connections_as_channels, RoutingFixture) {
  const auto fd = agent();
  auto [frames, closed] = exchange(fd.get(), routed(1, hello(3)) + routed(2, hello(4)));
  BOOST_REQUIRE(frames.size() == 2u);
  BOOST_TEST(inner(frames[0]).channel == 1u);
  BOOST_TEST((inner(frames[0]).frame.type == protocol::MessageType::Welcome));
  BOOST_TEST(inner(frames[1]).channel == 2u);
  const std::string report =
      protocol::encode_frame(protocol::MessageType::Report, R"({"step": 1, "metrics": {}})");
  std::tie(frames, closed) = exchange(fd.get(), routed(2, report) + routed(1, report));
  BOOST_REQUIRE(frames.size() == 2u);
  BOOST_TEST(inner(frames[0]).channel == 2u);
  BOOST_TEST((inner(frames[0]).frame.type == protocol::MessageType::Decision));
  BOOST_TEST(handler.reports == 2);
  const auto stats = server.stats();
  BOOST_TEST(stats.open == 1u);  // one descriptor for three connections
  BOOST_TEST(stats.channels == 2u);
  BOOST_TEST(stats.routed == 4u);
  // The local peer of channel 1 went away: the study learns it, the others go on.
  std::tie(frames, closed) = exchange(
      fd.get(), protocol::encode_frame(protocol::MessageType::ChannelClosed,
                                       protocol::encode(protocol::ChannelClosed{1, "exited"})));
  BOOST_TEST(handler.closed.size() == 1u);
  BOOST_TEST(server.stats().channels == 1u);
  BOOST_TEST(!closed);
}

// A wrong credential, a claim the agent may not carry, or garbage inside a channel ends
// that channel (ERROR, then CHANNEL_CLOSED for the agent), never the agent's connection.
BOOST_FIXTURE_TEST_CASE(a_bad_channel_ends_alone, RoutingFixture) {
  const auto fd = agent();
  const std::string forged =
      hello_frame(protocol::attempt_credential(secret, 4, 0, 0), 3);  // trial 4's, claims 3
  auto [frames, closed] = exchange(
      fd.get(), routed(5, forged) + routed(6, hello(8)) +
                    routed(9, protocol::encode_frame(protocol::MessageType::Report, "{}")));
  BOOST_TEST(!closed);
  BOOST_REQUIRE(frames.size() == 6u);
  BOOST_TEST((inner(frames[0]).frame.type == protocol::MessageType::Error));
  BOOST_TEST(error_text(inner(frames[0]).frame).find("wrong or missing credential") !=
             std::string::npos);
  BOOST_TEST((frames[1].type == protocol::MessageType::ChannelClosed));
  BOOST_TEST(protocol::decode_channel_closed(protocol::payload_object(frames[1])).channel == 5u);
  BOOST_TEST(error_text(inner(frames[2]).frame) == "trial 8 does not run on this agent's node");
  BOOST_TEST(error_text(inner(frames[4]).frame) == "first message is REPORT, not HELLO");
  BOOST_TEST(server.stats().channels == 0u);
  BOOST_TEST(handler.closed.empty());  // none was ever the study's
  std::tie(frames, closed) = exchange(fd.get(), routed(10, hello(3)));
  BOOST_TEST((inner(frames.at(0)).frame.type == protocol::MessageType::Welcome));
}

// Only a connection the handler lets route may send ROUTED: a trial's may not.
BOOST_FIXTURE_TEST_CASE(only_an_agent_routes, RoutingFixture) {
  const auto fd = agent();
  auto [frames, closed] = exchange(fd.get(), routed(1, hello(3)));
  protocol::UniqueFd trial = connect_to(server.port());
  exchange(trial.get(), hello(4));
  std::tie(frames, closed) = exchange(trial.get(), routed(1, hello(3)));
  BOOST_TEST(closed);
  BOOST_TEST(error_text(frames.at(0)) == "ROUTED from a connection that is not a node agent's");
}

// An agent carries at most max_channels_per_agent channels (3 here): the next is told
// BUSY and closed, and a channel that ends makes room.
BOOST_FIXTURE_TEST_CASE(an_agents_channels_are_bounded, RoutingFixture) {
  const auto fd = agent();
  auto [frames, closed] = exchange(fd.get(), routed(1, hello(3)) + routed(2, hello(3)) +
                                                 routed(3, hello(3)) + routed(4, hello(3)));
  BOOST_REQUIRE(frames.size() == 5u);
  BOOST_TEST((inner(frames[3]).frame.type == protocol::MessageType::Busy));
  BOOST_TEST(inner(frames[3]).channel == 4u);
  BOOST_TEST((frames[4].type == protocol::MessageType::ChannelClosed));
  BOOST_TEST(server.stats().channels == 3u);
}

// The agent's connection ends: every channel it carried ends with it, and the study
// hears of each.
BOOST_FIXTURE_TEST_CASE(channels_end_with_their_agent, RoutingFixture) {
  auto fd = agent();
  exchange(fd.get(), routed(1, hello(3)) + routed(2, hello(4)));
  fd.reset();
  for (int i = 0; i < 5; ++i)
    loop.run_once(20);
  BOOST_TEST(handler.closed.size() == 3u);  // the agent's and its two channels
  BOOST_TEST(server.stats().channels == 0u);
  BOOST_TEST(server.stats().open == 0u);
}

// A relay: a channel may itself be an agent, whose channels arrive ROUTED inside ROUTED,
// and the answers go back down the same way.
BOOST_FIXTURE_TEST_CASE(agents_nest_as_a_relay_tree, RoutingFixture) {
  const auto fd = agent();
  auto [frames, closed] = exchange(fd.get(), routed(1, hello(7)));  // an agent below
  BOOST_TEST((inner(frames.at(0)).frame.type == protocol::MessageType::Welcome));
  std::tie(frames, closed) = exchange(fd.get(), routed(1, routed(4, hello(3))));
  const auto outer = inner(frames.at(0));
  BOOST_TEST(outer.channel == 1u);
  const auto deeper = inner(outer.frame);
  BOOST_TEST(deeper.channel == 4u);
  BOOST_TEST((deeper.frame.type == protocol::MessageType::Welcome));
  BOOST_TEST(server.stats().channels == 2u);
}
