#pragma once
// The relay tier above the node agents (doc/protocol.md#relays): past about a thousand
// nodes, the coordinator's connections would follow the nodes; with relays they follow
// the nodes divided by the fan-out. The workers of one srun step are grouped by their
// node's place in the step (SLURM_NODEID): the first of each FANOUT consecutive workers
// is its group's relay, and the others connect to it instead of the coordinator. A relay
// is a node agent that also carries other agents' connections, one channel each; it
// forwards what it cannot forge (each agent authenticates both ways with the coordinator
// through it, by challenge, so the relay never sees a credential), and the coordinator
// checks every claim as it does for a direct connection.
//
// A relay listens on the address by which it reaches the coordinator and publishes it in
// a file of the study's trials folder (the folder every worker reads its credential
// from); the group's agents wait for that file, within a bound, and connect directly to
// the coordinator when it does not come or the relay does not answer.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "protocol/wire/unique_fd.hpp"

namespace slurmtune::runtime {

struct RelayPlace {
  std::string folder;      ///< where the step's relays publish their addresses
  std::size_t fanout = 0;  ///< workers per group, the relay included; 0 or 1: no relays
  std::size_t index = 0;   ///< this worker's node in its step (SLURM_NODEID)

  /// This worker relays for its group.
  bool relays() const { return fanout > 1 && index % fanout == 0; }
  /// This worker connects through its group's relay.
  bool relayed() const { return fanout > 1 && index % fanout != 0; }
  std::size_t group() const { return fanout > 1 ? index / fanout : 0; }
  /// The file holding the group's relay's address.
  std::string address_file() const;
};

/// Up to this many nodes the agents connect to the coordinator directly by default.
inline constexpr std::size_t kRelaysAbove = 1024;
inline constexpr std::size_t kDefaultRelayFanout = 64;

/// The fan-out of a study's relay tier: `chosen` (--relay-fanout) when given; else none
/// for up to kRelaysAbove nodes that fit the coordinator's `room` for connections, and
/// otherwise kDefaultRelayFanout, or more when even the relays would not fit the room.
std::size_t relay_fanout_for(std::size_t nodes, std::size_t room,
                             std::optional<std::size_t> chosen);

/// How long an agent waits for its relay's address before it connects directly.
inline constexpr std::chrono::seconds kRelayWait{60};

/// A listening TCP socket for the group's agents on the local address of the connected
/// socket `upward` (the interface that reaches the coordinator reaches the other nodes),
/// any port; `address` gets "IP:PORT". Error when it cannot listen.
protocol::UniqueFd listen_for_agents(int upward, std::string& address);
/// Writes `address` to `path`, making its folder: 0600, whole (written aside, then
/// renamed), so a reader sees the whole line or no file.
void publish_address(const std::string& path, const std::string& address);
/// Writes `address` to the place's file (publish_address).
void publish_relay_address(const RelayPlace& place, const std::string& address);
/// The group's relay's address once published; nullopt before.
std::optional<std::string> published_relay_address(const RelayPlace& place);

}  // namespace slurmtune::runtime
