#pragma once
// The coordinator's end of the control plane: a TCP listener and its connections, all
// on the coordinator's event loop. It owns authentication: a connection's first frame
// must be HELLO with the credential of what it claims to be (runtime/control/hello_check.hpp)
// within the hello timeout; anything else -- garbage bytes, an oversized frame, an unknown
// type, a wrong credential, silence -- closes that connection with a log line, and the
// study never sees it. Authenticated messages go to the ControlHandler.
//
// Node agents (doc/protocol.md#node-agents): an authenticated connection the handler
// lets route (a worker step's) carries the connections of its node's processes as
// channels, each frame inside a ROUTED frame. A channel is a connection like any other
// here -- its own id, its own HELLO checked with the same credentials, its own replies,
// wrapped on the way out -- except that it holds no descriptor: the coordinator's
// descriptors grow with agents, not with trials. The handler also says which claims an
// agent may carry (a trial placed on its node), and an agent carries at most
// max_channels_per_agent channels.
//
// Peers cannot exhaust it. At most max_unauthenticated connections wait for their HELLO:
// a new one closes the oldest. When accept() fails for want of descriptors (EMFILE,
// ENFILE), the oldest connection without HELLO is closed to make room; when there is
// none, the listener is no longer watched -- level-triggered epoll would report it ready
// again at once, for ever -- until a connection closes or half a second has passed, and
// the queued peers wait in the kernel's backlog. At most 32 connections (and half the
// cap) are accepted per turn of the loop, so a trial's HELLO is read before a flood of
// newer connections could push it out. A connection closed for room (evicted, silent past
// the hello timeout, past max_authenticated, or a handler's NoRoom) is told BUSY with
// when to try again, which both clients obey (doc/protocol.md#limits). Authenticated
// connections are bounded too: at most max_authenticated at once (a running trial's
// rank 0 may use a reserve of a quarter more), and none may leave more than kMaxOutbox
// bytes of replies unread (kMaxAgentOutbox for an agent; a client that pipelines
// requests without reading the answers is closed). Lines a peer can provoke go through
// a ThrottledLog.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "protocol/credentials.hpp"
#include "protocol/session_messages.hpp"
#include "protocol/wire/json_value.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/wire/unique_fd.hpp"
#include "runtime/control/event_loop.hpp"
#include "runtime/control/hello_check.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {

using ConnectionId = std::uint64_t;

/// A frame the coordinator sends back.
struct Reply {
  protocol::MessageType type = protocol::MessageType::Decision;
  std::string payload;
};

/// What the coordinator does with authenticated messages. Throwing ProtocolError from
/// any of these sends ERROR with its text and closes the connection.
class ControlHandler {
 public:
  virtual ~ControlHandler() = default;
  /// HELLO carried the credential of what it claims (or, for a worker, proved it by
  /// mutual authentication): returns the WELCOME payload.
  virtual std::string on_hello(ConnectionId id, const protocol::HelloFrom& hello) = 0;
  /// Any later message; returns the reply (a DECISION, an ASSIGN), if it has one now.
  virtual std::optional<Reply> on_message(ConnectionId id, protocol::MessageType type,
                                          const protocol::JsonObject& body) = 0;
  /// An authenticated connection ended (the peer closed it, or the server did).
  virtual void on_closed(ConnectionId id, const std::string& reason) = 0;
  /// The launch a trial's running attempt was given, and who derived its credential
  /// (protocol::AttemptGrant): a trial HELLO's credential must be that one. Launch 0 when
  /// the trial is not running.
  virtual protocol::AttemptGrant attempt_grant(core::TrialId /*trial*/) const { return {}; }
  /// Whether authenticated connection `id` may carry channels (a node agent's).
  virtual bool routes(ConnectionId /*id*/) const { return false; }
  /// A HELLO that came on a channel of agent `via`, before on_hello: throws ProtocolError
  /// when that agent may not speak for what it claims (a trial not placed on its node).
  virtual void check_routed(ConnectionId /*via*/, const protocol::HelloFrom& /*hello*/) const {}
};

/// Thrown by ControlHandler::on_hello: no room for this connection now. The client is
/// told BUSY and connects again after `retry_after_s`.
class NoRoom : public Error {
 public:
  NoRoom(const std::string& why, double retry_after_s)
      : Error(why), retry_after_s_(retry_after_s) {}
  double retry_after_s() const { return retry_after_s_; }

 private:
  double retry_after_s_;
};

struct ControlServerOptions {
  std::string listen_host = "0.0.0.0";  ///< interface to bind
  std::uint16_t port = 0;               ///< 0: any free port
  double hello_timeout_s = 10;          ///< unauthenticated connections are closed after this
  /// Connections waiting for HELLO at once (at most a quarter of RLIMIT_NOFILE).
  std::size_t max_unauthenticated = 128;
  /// Authenticated connections at once (at most half of RLIMIT_NOFILE); a HELLO past it
  /// is told BUSY, and the client tries again.
  std::size_t max_authenticated = 4096;
  /// Channels one node agent may carry at once; a channel past it is told BUSY.
  std::size_t max_channels_per_agent = 4096;
};

/// Replies a connection may leave unread before it is closed; an agent's carry all its
/// node's replies.
inline constexpr std::size_t kMaxOutbox = std::size_t{1} << 20;
inline constexpr std::size_t kMaxAgentOutbox = std::size_t{64} << 20;
/// What BUSY asks for when the connections are all taken.
inline constexpr double kBusyRetryS = 2;

struct ControlServerStats {
  std::uint64_t accepted = 0, authenticated = 0, refused = 0, frames = 0;
  /// Lines about refused peers left out of the log (at most 10 per 10 s go out).
  std::uint64_t peer_lines_left_out = 0;
  std::uint64_t accept_failures = 0;  ///< accept() failed for want of descriptors (EMFILE...)
  std::uint64_t accept_pauses = 0;    ///< times the listener stopped being watched for that
  std::uint64_t evicted = 0;          ///< unauthenticated connections closed for a newer one
  std::uint64_t over_capacity = 0;    ///< HELLOs told BUSY (past max_authenticated, NoRoom)
  std::uint64_t unread = 0;           ///< connections closed for leaving kMaxOutbox unread
  std::uint64_t routed = 0;           ///< frames that came on agents' channels
  std::size_t open = 0;               ///< connections with a descriptor of their own, now
  std::size_t channels = 0;           ///< agents' channels, now
  std::size_t peak_open = 0, peak_channels = 0;  ///< ... the most at once
  std::size_t max_authenticated = 0;  ///< the cap in force (the option, bounded by descriptors)
};

class ControlServer {
 public:
  /// `secret`: the session's, from which every credential is derived.
  ControlServer(EventLoop& loop, ControlHandler& handler, std::string secret,
                const ControlServerOptions& options);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  std::uint16_t port() const { return port_; }
  /// Periodic work (call every 100 ms or so): closes connections that have not said
  /// HELLO within the timeout, and watches the listener again after a pause.
  void tick();
  /// Sends one frame to an authenticated connection (a decision made later, ERROR).
  void send(ConnectionId id, protocol::MessageType type, const std::string& payload);
  void close(ConnectionId id, const std::string& reason);
  /// The counters, with the lines about refused peers the throttled log left out.
  ControlServerStats stats() const;

 private:
  struct Connection {
    protocol::UniqueFd fd;  ///< none for a channel
    std::string peer;
    protocol::FrameDecoder decoder;
    std::string outbox;
    bool authenticated = false;
    HelloCheck hello_check;
    bool want_write = false;  // EPOLLOUT armed: the outbox did not fit the socket
    std::chrono::steady_clock::time_point since;
    // A channel: the agent's connection that carries it, and its number there.
    ConnectionId via = 0;
    std::uint64_t channel = 0;
    // An agent's: whether it may carry channels, and the ones it carries.
    bool routes = false;
    std::map<std::uint64_t, ConnectionId> channels;
  };

  void accept_all();
  /// Stops accepting until a descriptor frees (`why` goes to the peer log).
  void out_of_descriptors(const std::string& why);
  void resume_accepting();
  bool evict_oldest_unauthenticated(const std::string& why);
  void on_readable(ConnectionId id);
  void read_chunks(ConnectionId id);
  void handle(ConnectionId id, Connection& c, const protocol::Frame& frame);
  void authenticate(ConnectionId id, Connection& c, const protocol::Frame& frame);
  void welcome(ConnectionId id, Connection& c, const protocol::Hello& hello);
  /// A ROUTED or CHANNEL_CLOSED frame of agent `id`.
  void route(ConnectionId id, Connection& agent, const protocol::Frame& frame);
  void refuse(ConnectionId id, const std::string& reason);
  /// Closes with BUSY: the client tries again after `retry_after_s` (room was wanted,
  /// or time ran out).
  void close_for_retry(ConnectionId id, const std::string& reason,
                       double retry_after_s = kBusyRetryS);
  /// Sends `last` (ERROR, BUSY) without waiting, tells a channel's agent, and drops it.
  void end_with(ConnectionId id, Connection& c, const std::string& last, const std::string& reason);
  /// Queues a whole frame (a channel's goes inside ROUTED to its agent) and sends what
  /// the socket takes; closes a connection whose unread replies pass its bound.
  void queue(ConnectionId id, Connection& c, const std::string& frame);
  void flush(ConnectionId id, Connection& c);
  void drop(ConnectionId id, const std::string& reason, bool tell_handler);

  EventLoop& loop_;
  ControlHandler& handler_;
  std::string secret_;
  double hello_timeout_s_;
  std::size_t max_unauthenticated_;
  std::size_t max_authenticated_;
  std::size_t max_channels_per_agent_;
  protocol::UniqueFd listener_;
  std::uint16_t port_ = 0;
  int descriptor_ceiling_;  // RLIMIT_NOFILE's soft limit when the server started
  // The last descriptors a connection may not take: a launch's files and pipes, the
  // results file and a sanitizer's own pipe need some when connections fill the rest.
  static constexpr int kDescriptorsKept = 4;
  std::optional<std::chrono::steady_clock::time_point> paused_since_;
  ConnectionId next_id_ = 1;
  ConnectionId reading_ = 0;  // the connection being read: its replies wait for the read's end
  static constexpr int kChunksPerRead = 1;
  static constexpr std::size_t kReadChunk = 16384;
  // Found by id for every frame (each of 16,384 channels is one), never walked in order:
  // waiting_hello_ keeps the order that eviction needs.
  std::unordered_map<ConnectionId, Connection> connections_;
  // Connections with a descriptor of their own: waiting for HELLO, and authenticated.
  std::size_t unauthenticated_ = 0, direct_authenticated_ = 0;
  // The connections and channels still waiting for their HELLO, the oldest first: the
  // hello timeout and eviction look at these alone, not at every connection.
  std::set<ConnectionId> waiting_hello_;
  ControlServerStats stats_;
  ThrottledLog peer_log_{"control plane"};
};

}  // namespace slurmtune::runtime
