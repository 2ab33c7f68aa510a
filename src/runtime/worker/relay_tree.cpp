#include "runtime/worker/relay_tree.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace slurmtune::runtime {

std::string RelayPlace::address_file() const {
  return folder + "/group-" + std::to_string(group());
}

std::size_t relay_fanout_for(std::size_t nodes, std::size_t room,
                             std::optional<std::size_t> chosen) {
  if (chosen) return *chosen;
  if (nodes <= kRelaysAbove && nodes <= room) return 0;
  // Half the room for relays: the other half stays for joined jobs and direct clients.
  const std::size_t relays = std::max<std::size_t>(room / 2, 1);
  return std::max(kDefaultRelayFanout, (nodes + relays - 1) / relays);
}

protocol::UniqueFd listen_for_agents(int upward, std::string& address) {
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  if (::getsockname(upward, reinterpret_cast<sockaddr*>(&local), &length) != 0 ||
      (local.ss_family != AF_INET && local.ss_family != AF_INET6))
    throw Error("relay: the connection to the coordinator is not TCP; no relay here");
  char host[INET6_ADDRSTRLEN] = "";
  if (local.ss_family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&local);
    in->sin_port = 0;
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&local);
    in6->sin6_port = 0;
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
  }
  protocol::UniqueFd fd(::socket(local.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd || ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&local), length) != 0 ||
      ::listen(fd.get(), 1024) != 0)
    throw Error(std::string("relay: cannot listen on ") + host + ": " + std::strerror(errno));
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof bound;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_length);
  const std::uint16_t port =
      ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                       : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  address = std::string(host) + ":" + std::to_string(port);
  return fd;
}

void publish_address(const std::string& path, const std::string& address) {
  const std::string partial = path + ".partial";
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
  const protocol::UniqueFd fd(
      ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  const std::string line = address + "\n";
  if (!fd || ::write(fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    throw Error("cannot write " + partial + ": " + std::strerror(errno));
  if (::rename(partial.c_str(), path.c_str()) != 0)
    throw Error("cannot publish " + path + ": " + std::strerror(errno));
}

void publish_relay_address(const RelayPlace& place, const std::string& address) {
  try {
    publish_address(place.address_file(), address);
  } catch (const Error& e) {
    throw Error(std::string("relay: ") + e.what());
  }
}

std::optional<std::string> published_relay_address(const RelayPlace& place) {
  std::ifstream in(place.address_file());
  std::string address;
  if (!in || !std::getline(in, address) || address.empty()) return std::nullopt;
  return address;
}

}  // namespace slurmtune::runtime
