#include "runtime/worker/worker_session.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "protocol/auth_messages.hpp"
#include "protocol/wire/json_value.hpp"
#include "protocol/wire/mutual_auth.hpp"
#include "protocol/wire/secret.hpp"
#include "protocol/wire/tcp_connect.hpp"
#include "protocol/worker_messages.hpp"

namespace slurmtune::runtime {
namespace {

using Clock = std::chrono::steady_clock;
// The authentication exchange must be done within this; a send to a coordinator that
// stopped reading fails after kSendTimeout instead of blocking the worker for ever.
constexpr std::chrono::seconds kHandshakeTimeout{10}, kSendTimeout{60};

// The next frame within `deadline`; throws Error when none comes.
protocol::Frame next_frame(Session& s, Clock::time_point deadline, const std::string& address) {
  for (;;) {
    if (auto frame = s.decoder.next()) return *frame;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{s.fd.get(), POLLIN, 0};
    const int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0)
      throw Error("the coordinator at " + address + " did not answer within " +
                  std::to_string(kHandshakeTimeout.count()) + " s");
    char buffer[4096];
    const ssize_t n = ::recv(s.fd.get(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("the coordinator at " + address + " closed the connection");
    s.decoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
}

}  // namespace

void send_bytes(int fd, std::string_view bytes) {
  for (std::size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(std::string("sending to the coordinator: ") + std::strerror(errno));
    sent += static_cast<std::size_t>(n);
  }
}

void send_frame(int fd, protocol::MessageType type, const std::string& payload) {
  send_bytes(fd, protocol::encode_frame(type, payload));
}

Session open_session(const std::string& address, const std::string& token,
                     protocol::HelloFrom from) {
  Session s{protocol::connect_tcp(address), {}};
  const timeval send_timeout{kSendTimeout.count(), 0};
  ::setsockopt(s.fd.get(), SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
  const auto deadline = Clock::now() + kHandshakeTimeout;
  const std::string nonce = protocol::generate_token();
  send_frame(s.fd.get(), protocol::MessageType::Hello,
             protocol::encode(protocol::Hello{"", nonce, std::move(from)}));
  const auto refused = [&](const protocol::Frame& f) {
    return Error("the coordinator at " + address + " refused this worker: " +
                 protocol::decode_error(protocol::payload_object(f)).error);
  };
  const auto unproven = [&] {
    return Error("the process at " + address +
                 " could not prove that it holds the study's token (an address left by an "
                 "earlier session?)");
  };
  const auto busy = [](const protocol::Frame& f) {
    return NoRoomYet(protocol::decode_busy(protocol::payload_object(f)));
  };
  const protocol::Frame frame = next_frame(s, deadline, address);
  if (frame.type == protocol::MessageType::Error) throw refused(frame);
  if (frame.type == protocol::MessageType::Busy) throw busy(frame);
  if (frame.type != protocol::MessageType::Challenge) throw unproven();
  protocol::Challenge challenge;
  try {
    challenge = protocol::decode_challenge(protocol::payload_object(frame));
  } catch (const protocol::ProtocolError&) {
    throw unproven();
  }
  if (!protocol::tokens_equal(challenge.proof,
                              protocol::coordinator_proof(token, nonce, challenge.nonce)))
    throw unproven();
  send_frame(
      s.fd.get(), protocol::MessageType::Proof,
      protocol::encode(protocol::Proof{protocol::worker_proof(token, challenge.nonce, nonce)}));
  const protocol::Frame welcome = next_frame(s, deadline, address);
  if (welcome.type == protocol::MessageType::Error) throw refused(welcome);
  if (welcome.type == protocol::MessageType::Busy) throw busy(welcome);
  if (welcome.type != protocol::MessageType::Welcome)
    throw Error("the coordinator at " + address + " sent " + std::string(to_string(welcome.type)) +
                " instead of WELCOME");
  s.welcome = protocol::decode_worker_welcome(protocol::payload_object(welcome));
  s.credential = token;
  return s;
}

}  // namespace slurmtune::runtime
