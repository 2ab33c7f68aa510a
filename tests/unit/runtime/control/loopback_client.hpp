#pragma once
// A test's side of the control server's protocol on loopback: a connection to its port,
// an exchange of bytes while the loop turns, the HELLO frame of an attempt, a refusal's text.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "protocol/wire/protocol.hpp"
#include "protocol/wire/unique_fd.hpp"
#include "runtime/control/event_loop.hpp"

namespace slurmtune::testing {

// Connects a socket made by the caller (options that must precede the connection set) to
// the server's port on loopback.
inline void connect_loopback(int fd, std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  BOOST_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
}

// A connection to the server's port on loopback (replies time out after 2 s).
inline protocol::UniqueFd connect_to(std::uint16_t port) {
  protocol::UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  connect_loopback(fd.get(), port);
  timeval timeout{2, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

// Sends bytes, lets the server work, returns every frame it answered and whether it
// closed the connection.
inline std::pair<std::vector<protocol::Frame>, bool> exchange_on(runtime::EventLoop& loop, int fd,
                                                                 const std::string& bytes) {
  if (!bytes.empty()) ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  for (int i = 0; i < 5; ++i)
    loop.run_once(20);
  protocol::FrameDecoder decoder;
  std::vector<protocol::Frame> frames;
  char buffer[4096];
  bool closed = false;
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0) closed = true;
    if (n <= 0) break;
    decoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
  while (auto f = decoder.next())
    frames.push_back(*f);
  return {frames, closed};
}

// HELLO of attempt 0 of `trial` carrying `credential`.
inline std::string hello_frame(const std::string& credential, int trial = 3) {
  return protocol::encode_frame(protocol::MessageType::Hello,
                                R"({"token": ")" + credential + R"(", "trial": )" +
                                    std::to_string(trial) + R"(, "attempt": 0})");
}

// The text of an ERROR frame.
inline std::string error_text(const protocol::Frame& f) {
  return std::get<std::string>(protocol::payload_object(f).at("error").data);
}

}  // namespace slurmtune::testing
