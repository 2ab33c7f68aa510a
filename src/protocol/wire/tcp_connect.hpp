#pragma once
// The client end of a control-plane connection: trial clients and worker steps connect
// to the coordinator's "HOST:PORT", or to their node agent's "unix:PATH", with this.
#include <string>

#include "core/error.hpp"
#include "protocol/wire/unique_fd.hpp"

namespace slurmtune::protocol {

class ConnectError : public Error {
 public:
  enum class Kind {
    BadAddress,  ///< not HOST:PORT or unix:PATH
    Unresolved,  ///< the host name does not resolve
    Refused,     ///< no listener answered (the coordinator is gone)
  };
  ConnectError(Kind kind, const std::string& what) : Error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

/// A connected TCP socket (close-on-exec, TCP_NODELAY) to `address`, "HOST:PORT"; tries
/// every address the host resolves to. Throws ConnectError saying why not.
UniqueFd connect_tcp(const std::string& address);

/// A connected stream socket (close-on-exec) to `address`: "unix:PATH" (a node agent's
/// local socket, doc/protocol.md#node-agents) or "HOST:PORT" (connect_tcp).
UniqueFd connect_address(const std::string& address);

}  // namespace slurmtune::protocol
