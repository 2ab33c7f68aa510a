// The relay tier (issue #61): which worker relays for which, the fan-out a study gets,
// the address a relay publishes, and a relay that carries only workers' connections.
#define BOOST_TEST_MODULE runtime_relay_tree
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "protocol/auth_messages.hpp"
#include "protocol/route_messages.hpp"
#include "protocol/session_messages.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/wire/secret.hpp"
#include "protocol/wire/tcp_connect.hpp"
#include "runtime/control/event_loop.hpp"
#include "runtime/worker/node_agent.hpp"
#include "runtime/worker/relay_tree.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;

BOOST_AUTO_TEST_CASE(the_first_worker_of_each_group_relays_for_the_others) {
  const RelayPlace none{"/f", 0, 5};
  BOOST_TEST(!none.relays());
  BOOST_TEST(!none.relayed());
  for (std::size_t index : {0, 4, 8}) {
    const RelayPlace place{"/f", 4, index};
    BOOST_TEST(place.relays());
    BOOST_TEST(!place.relayed());
    BOOST_TEST(place.address_file() == "/f/group-" + std::to_string(index / 4));
  }
  for (std::size_t index : {1, 3, 7}) {
    const RelayPlace place{"/f", 4, index};
    BOOST_TEST(place.relayed());
    BOOST_TEST(place.address_file() == "/f/group-" + std::to_string(index / 4));
  }
}

// No relays up to a thousand nodes that fit the coordinator's room; past that 64 nodes
// a relay, more when even the relays would not fit half the room; a chosen one stays.
BOOST_AUTO_TEST_CASE(a_study_gets_relays_past_a_thousand_nodes_or_its_room) {
  BOOST_TEST(relay_fanout_for(16, 4096, std::nullopt) == 0U);
  BOOST_TEST(relay_fanout_for(1024, 4096, std::nullopt) == 0U);
  BOOST_TEST(relay_fanout_for(1025, 4096, std::nullopt) == 64U);
  BOOST_TEST(relay_fanout_for(600, 512, std::nullopt) == 64U);     // past the room
  BOOST_TEST(relay_fanout_for(40000, 512, std::nullopt) == 157U);  // 256 relays at most
  BOOST_TEST(relay_fanout_for(9408, 4096, std::nullopt) == 64U);   // 147 relays
  BOOST_TEST(relay_fanout_for(2048, 4096, std::size_t{0}) == 0U);  // --relay-fanout 0
  BOOST_TEST(relay_fanout_for(4, 4096, std::size_t{2}) == 2U);
}

BOOST_AUTO_TEST_CASE(a_relay_publishes_its_address_whole_and_for_its_owner_alone) {
  slurmtune::testing::TempFolder folder("relays");
  const RelayPlace relay{(folder.path() / "step-0").string(), 8, 16};
  const RelayPlace member{relay.folder, 8, 21};
  BOOST_TEST(!published_relay_address(member).has_value());  // not yet: the agent waits
  publish_relay_address(relay, "10.0.0.7:40123");
  BOOST_TEST(published_relay_address(member).value() == "10.0.0.7:40123");
  struct stat info {};
  BOOST_REQUIRE(::stat(relay.address_file().c_str(), &info) == 0);
  BOOST_TEST((info.st_mode & 0777) == 0600U);
  BOOST_TEST(!published_relay_address(RelayPlace{relay.folder, 8, 3}).has_value());  // group 0
}

namespace {

// A connected TCP socket to a listener on 127.0.0.1, as a worker's upward connection.
struct TcpPair {
  protocol::UniqueFd listener, client, server;
  TcpPair() {
    listener = protocol::UniqueFd(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in where{};
    where.sin_family = AF_INET;
    where.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&where), sizeof where) == 0);
    BOOST_REQUIRE(::listen(listener.get(), 4) == 0);
    socklen_t length = sizeof where;
    ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&where), &length);
    client = protocol::connect_tcp("127.0.0.1:" + std::to_string(ntohs(where.sin_port)));
    server = protocol::UniqueFd(::accept(listener.get(), nullptr, nullptr));
  }
};

void send_hello(int fd, protocol::HelloFrom from) {
  const std::string frame = protocol::encode_frame(
      protocol::MessageType::Hello,
      protocol::encode(protocol::Hello{"", protocol::generate_token(), std::move(from)}));
  BOOST_REQUIRE(::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) ==
                static_cast<ssize_t>(frame.size()));
}

}  // namespace

// A relay listens where it reaches the coordinator; another node's worker that connects
// is carried up as a channel (its HELLO inside ROUTED, for the coordinator to check);
// anything else that connects there is refused by the relay itself.
BOOST_AUTO_TEST_CASE(a_relay_carries_workers_and_refuses_the_rest) {
  EventLoop loop;
  std::string upward;
  NodeAgent agent(
      loop, [&](const std::string& frame) { upward += frame; },
      [](core::TrialId) { return false; });
  const TcpPair coordinator;
  std::string address;
  agent.carry_agents(listen_for_agents(coordinator.client.get(), address));
  BOOST_TEST(address.rfind("127.0.0.1:", 0) == 0U);

  const protocol::UniqueFd worker = protocol::connect_tcp(address);
  send_hello(worker.get(), protocol::WorkerHello{"n2", ""});
  const protocol::UniqueFd trial = protocol::connect_tcp(address);
  send_hello(trial.get(), protocol::TrialHello{7, 0, 0, ""});
  for (int turn = 0; turn < 20 && agent.channels() != 1; ++turn)
    loop.run_once(50);
  for (int turn = 0; turn < 5; ++turn)
    loop.run_once(10);

  protocol::FrameDecoder up;
  up.feed(upward);
  const auto routed_frame = up.next();
  BOOST_REQUIRE(routed_frame.has_value());
  const protocol::Routed routed = protocol::decode_routed(*routed_frame);
  BOOST_TEST((routed.frame.type == protocol::MessageType::Hello));
  const auto hello = protocol::decode_hello(protocol::payload_object(routed.frame));
  BOOST_TEST(std::get<protocol::WorkerHello>(hello.from).node == "n2");
  BOOST_TEST(!up.next().has_value());  // the trial's HELLO never went up
  BOOST_TEST(agent.channels() == 1U);

  char buffer[4096];
  const ssize_t n = ::recv(trial.get(), buffer, sizeof buffer, 0);
  BOOST_REQUIRE(n > 0);
  protocol::FrameDecoder down;
  down.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  const auto refusal = down.next();
  BOOST_REQUIRE(refusal.has_value());
  BOOST_TEST((refusal->type == protocol::MessageType::Error));
  BOOST_TEST(protocol::decode_error(protocol::payload_object(*refusal))
                 .error.find("a relay carries only the study's workers' connections") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_relay_needs_a_tcp_connection_upward) {
  int pair[2];
  BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
  const protocol::UniqueFd a(pair[0]), b(pair[1]);
  std::string address;
  BOOST_CHECK_THROW(listen_for_agents(a.get(), address), Error);
}
