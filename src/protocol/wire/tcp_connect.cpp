#include "protocol/wire/tcp_connect.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>

namespace slurmtune::protocol {

UniqueFd connect_tcp(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos)
    throw ConnectError(ConnectError::Kind::BadAddress, "'" + address + "' is not HOST:PORT");
  const std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
    throw ConnectError(ConnectError::Kind::Unresolved,
                       "cannot resolve the coordinator " + address + ": " + gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owner(found, ::freeaddrinfo);
  std::string error = "no address";
  for (const addrinfo* a = found; a; a = a->ai_next) {
    UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0));
    if (!fd) continue;
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0) {
      const int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    error = std::strerror(errno);
  }
  throw ConnectError(ConnectError::Kind::Refused,
                     "cannot connect to the coordinator at " + address + ": " + error);
}

UniqueFd connect_address(const std::string& address) {
  constexpr std::string_view kUnix = "unix:";
  if (!address.starts_with(kUnix)) return connect_tcp(address);
  const std::string path = address.substr(kUnix.size());
  sockaddr_un where{};
  where.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof where.sun_path)
    throw ConnectError(ConnectError::Kind::BadAddress,
                       "'" + address + "' is not unix:PATH with a path of 1 to " +
                           std::to_string(sizeof where.sun_path - 1) + " bytes");
  path.copy(where.sun_path, path.size());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd)
    throw ConnectError(ConnectError::Kind::Refused, std::string("socket: ") + std::strerror(errno));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&where), sizeof where) != 0)
    throw ConnectError(ConnectError::Kind::Refused, "cannot connect to the node agent at " +
                                                        address + ": " + std::strerror(errno));
  return fd;
}

}  // namespace slurmtune::protocol
