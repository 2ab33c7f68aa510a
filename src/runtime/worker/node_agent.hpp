#pragma once
// The node agent inside a worker step (doc/protocol.md#node-agents): the trials a worker
// starts talk to it over a local socket instead of each holding a TCP connection to the
// coordinator, and it carries their connections as channels of its own one connection
// upward. Every frame of a local connection travels whole inside ROUTED; the coordinator
// checks each channel's HELLO as it checks a direct connection's, so the agent forwards
// claims it cannot forge. The agent itself refuses a HELLO for a trial it did not start
// (the coordinator checks that too), and bounds its peers: at most kMaxLocalChannels
// local connections, kHelloWithinS to say HELLO, kMaxOutbox bytes of replies unread.
//
// The socket lies in a folder of its own (0700) under $TMPDIR (or /tmp): only the
// study's user reaches it, and it is removed with the agent, or by the next agent on the
// node when its own was killed (a lock file in it, held while it lives, says which).
//
// A relay (runtime/worker/relay_tree.hpp) is an agent that also carries the connections
// of other nodes' agents, accepted on a TCP socket: their first frame must be a worker's
// HELLO, at most kMaxRelayedAgents of them, each allowed more unread replies (they carry
// every trial of their node).
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "core/trial_id.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/wire/unique_fd.hpp"
#include "runtime/control/event_loop.hpp"

namespace slurmtune::runtime {

class NodeAgent {
 public:
  static constexpr std::size_t kMaxLocalChannels = 4096;
  static constexpr double kHelloWithinS = 10;
  static constexpr std::size_t kMaxRelayedAgents = 1024;

  /// `up` sends one whole frame to the coordinator (the worker batches them per turn);
  /// `hosts` says whether a trial runs here (the worker started it). Its socket's folder
  /// is made in `folder_base` ("": $TMPDIR, else /tmp), where it also removes the
  /// folders of this user's agents that died.
  NodeAgent(EventLoop& loop, std::function<void(const std::string&)> up,
            std::function<bool(core::TrialId)> hosts, const std::string& folder_base = {});
  ~NodeAgent();
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  /// "unix:PATH": SLURMTUNE_ADDR for the trials this agent carries.
  std::string address() const { return "unix:" + socket_path_; }
  /// Makes this agent its group's relay: it carries the agents that connect to
  /// `listener` (a listening TCP socket, relay_tree.hpp's listen_for_agents).
  void carry_agents(protocol::UniqueFd listener);
  /// A ROUTED or CHANNEL_CLOSED frame from the coordinator.
  void from_coordinator(const protocol::Frame& frame);
  /// Periodic work: closes local connections silent past kHelloWithinS.
  void tick();
  std::size_t channels() const { return channels_.size(); }

 private:
  struct Channel {
    protocol::UniqueFd fd;
    protocol::FrameDecoder decoder;
    std::string outbox;
    bool said_hello = false, want_write = false;
    bool agent = false;  // another node's agent, carried by this relay
    std::chrono::steady_clock::time_point since;
  };

  void accept_all(int listener, bool agents);
  void on_readable(std::uint64_t number);
  /// The channel's first frame: a HELLO for a trial this node runs (an agent's: a
  /// worker's HELLO); ProtocolError else.
  void check_hello(const protocol::Frame& frame, bool agent) const;
  void deliver(std::uint64_t number, const std::string& frame);
  void flush(std::uint64_t number, Channel& c);
  /// Closes the local end; `tell`: the coordinator learns (CHANNEL_CLOSED) why.
  void close(std::uint64_t number, const std::string& reason, bool tell);
  /// The local peer did wrong: ERROR to it, CHANNEL_CLOSED up, closed.
  void refuse(std::uint64_t number, const std::string& reason);

  EventLoop& loop_;
  std::function<void(const std::string&)> up_;
  std::function<bool(core::TrialId)> hosts_;
  std::string folder_, socket_path_;
  protocol::UniqueFd lock_;  // held while the agent lives: a dead one's folder is removed
  protocol::UniqueFd listener_, agent_listener_;
  std::uint64_t next_channel_ = 1;
  std::size_t agents_ = 0;  // channels_ that are other nodes' agents
  std::map<std::uint64_t, Channel> channels_;
};

}  // namespace slurmtune::runtime
