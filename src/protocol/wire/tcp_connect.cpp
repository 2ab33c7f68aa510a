#include "protocol/wire/tcp_connect.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

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

}  // namespace slurmtune::protocol
