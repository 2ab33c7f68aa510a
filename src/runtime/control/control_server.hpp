#pragma once
// The coordinator's end of the control plane: a TCP listener and its connections, all
// on the coordinator's event loop. It owns authentication: a connection's first frame
// must be HELLO with the credential of what it claims to be (protocol/credentials.hpp:
// derived from the session's secret, compared in constant time) within the hello
// timeout; anything else -- garbage bytes, an oversized frame, an unknown type, a wrong
// credential, silence -- closes that connection with a log line, and the study never sees it.
// Authenticated messages go to the ControlHandler.
//
// Peers cannot exhaust it. At most max_unauthenticated connections wait for their HELLO:
// a new one closes the oldest. When accept() fails for want of descriptors (EMFILE,
// ENFILE), the oldest connection without HELLO is closed to make room; when there is
// none, the listener is no longer watched -- level-triggered epoll would report it ready
// again at once, for ever -- until a connection closes or half a second has passed, and
// the queued peers wait in the kernel's backlog. At most 32 connections (and half the
// cap) are accepted per turn of the loop, so a trial's HELLO is read before a flood of
// newer connections could push it out. A connection closed for room (evicted, silent past
// the hello timeout, or past max_authenticated) is closed without ERROR, which both
// clients take as final: they connect again (doc/protocol.md#limits). Authenticated
// connections are bounded too: at most max_authenticated at once, and none may leave
// more than kMaxOutbox bytes of replies unread (a client that pipelines requests without
// reading the answers is closed). Lines a peer can provoke go through a ThrottledLog.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "protocol/session_messages.hpp"
#include "protocol/wire/json_value.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/wire/unique_fd.hpp"
#include "runtime/control/event_loop.hpp"
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
  /// The launch a trial's running attempt was given (protocol::attempt_credential): a
  /// trial HELLO's credential must be that launch's. 0 when the trial is not running.
  virtual std::uint64_t launch_of(core::TrialId /*trial*/) const { return 0; }
};

struct ControlServerOptions {
  std::string listen_host = "0.0.0.0";  ///< interface to bind
  std::uint16_t port = 0;               ///< 0: any free port
  double hello_timeout_s = 10;          ///< unauthenticated connections are closed after this
  /// Connections waiting for HELLO at once (at most a quarter of RLIMIT_NOFILE).
  std::size_t max_unauthenticated = 128;
  /// Authenticated connections at once (at most half of RLIMIT_NOFILE); a HELLO past it
  /// is closed without a reply, and the client tries again.
  std::size_t max_authenticated = 4096;
};

/// Replies a connection may leave unread before it is closed.
inline constexpr std::size_t kMaxOutbox = std::size_t{1} << 20;

struct ControlServerStats {
  std::uint64_t accepted = 0, authenticated = 0, refused = 0, frames = 0;
  /// Lines about refused peers left out of the log (at most 10 per 10 s go out).
  std::uint64_t peer_lines_left_out = 0;
  std::uint64_t accept_failures = 0;  ///< accept() failed for want of descriptors (EMFILE...)
  std::uint64_t accept_pauses = 0;    ///< times the listener stopped being watched for that
  std::uint64_t evicted = 0;          ///< unauthenticated connections closed for a newer one
  std::uint64_t over_capacity = 0;    ///< HELLOs closed past max_authenticated
  std::uint64_t unread = 0;           ///< connections closed for leaving kMaxOutbox unread
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
  ControlServerStats stats() const {
    ControlServerStats now = stats_;
    now.peer_lines_left_out = peer_log_.left_out();
    return now;
  }

 private:
  struct Connection {
    protocol::UniqueFd fd;
    std::string peer;
    protocol::FrameDecoder decoder;
    std::string outbox;
    bool authenticated = false;
    // A HELLO with a "challenge", waiting for its PROOF (protocol/wire/mutual_auth.hpp).
    std::optional<protocol::Hello> challenged_hello;
    std::string client_nonce, server_nonce;
    std::string key;          ///< the credential the challenged HELLO's claim needs
    bool want_write = false;  // EPOLLOUT armed: the outbox did not fit the socket
    std::chrono::steady_clock::time_point since;
  };

  void accept_all();
  void out_of_descriptors(int error);
  void resume_accepting();
  bool evict_oldest_unauthenticated(const std::string& why);
  void on_readable(ConnectionId id);
  void on_writable(ConnectionId id);
  void handle(ConnectionId id, Connection& c, const protocol::Frame& frame);
  void authenticate(ConnectionId id, Connection& c, const protocol::Frame& frame);
  void challenge(ConnectionId id, Connection& c, protocol::Hello hello);
  void check_proof(ConnectionId id, Connection& c, const protocol::Frame& frame);
  void welcome(ConnectionId id, Connection& c, const protocol::Hello& hello);
  void refuse(ConnectionId id, const std::string& reason);
  /// Closes without ERROR: the client tries again (room was wanted, or time ran out).
  void close_for_retry(ConnectionId id, const std::string& reason);
  /// Queues a frame and sends what the socket takes; closes a connection whose unread
  /// replies pass kMaxOutbox.
  void queue(ConnectionId id, Connection& c, protocol::MessageType type,
             const std::string& payload);
  void flush(ConnectionId id, Connection& c);
  void drop(ConnectionId id, const std::string& reason, bool tell_handler);

  EventLoop& loop_;
  ControlHandler& handler_;
  std::string secret_;
  double hello_timeout_s_;
  std::size_t max_unauthenticated_;
  std::size_t max_authenticated_;
  protocol::UniqueFd listener_;
  std::uint16_t port_ = 0;
  std::optional<std::chrono::steady_clock::time_point> paused_since_;
  ConnectionId next_id_ = 1;
  std::map<ConnectionId, Connection> connections_;  // by id: the oldest first
  std::size_t unauthenticated_ = 0;
  ControlServerStats stats_;
  ThrottledLog peer_log_{"control plane"};
};

}  // namespace slurmtune::runtime
