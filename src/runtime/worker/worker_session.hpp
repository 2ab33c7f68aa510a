#pragma once
// A worker's authenticated connection to the coordinator: connect, the two-way
// authentication (protocol/wire/mutual_auth.hpp: the coordinator proves it holds the
// credential before the worker does, so a stale published address that another process
// now answers learns nothing), and the frames of the handshake, each within its bound.
#include <chrono>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "protocol/route_messages.hpp"
#include "protocol/session_messages.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/wire/unique_fd.hpp"

namespace slurmtune::runtime {

/// An authenticated connection, and what arrived after the WELCOME.
struct Session {
  protocol::UniqueFd fd;
  protocol::FrameDecoder decoder;
  protocol::WorkerWelcome welcome = {};
  /// What this worker proved it holds (its node's credential, or a joined job's secret):
  /// the credentials of the attempts it starts derive from it.
  std::string credential = {};
};

/// BUSY: the coordinator has no room for this worker now (doc/protocol.md#limits).
class NoRoomYet : public Error {
 public:
  explicit NoRoomYet(const protocol::Busy& busy)
      : Error("the coordinator has no room yet (" + busy.why + ")"),
        retry_after_s(busy.retry_after_s) {}
  double retry_after_s;
};

/// Sends all of `bytes`; Error when the coordinator is gone (or stopped reading for the
/// socket's send timeout).
void send_bytes(int fd, std::string_view bytes);
void send_frame(int fd, protocol::MessageType type, const std::string& payload);

/// Connects to `address` and authenticates both ways as `from` with `token`: the
/// session, or Error saying why not (NoRoomYet for BUSY).
Session open_session(const std::string& address, const std::string& token,
                     protocol::HelloFrom from);

}  // namespace slurmtune::runtime
