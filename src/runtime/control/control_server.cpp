#include "runtime/control/control_server.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "core/number_text.hpp"
#include "protocol/auth_messages.hpp"
#include "protocol/credentials.hpp"
#include "protocol/wire/mutual_auth.hpp"
#include "protocol/wire/secret.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {
namespace {

// The launch number a HELLO's credential must cover: a trial's running one, 0 for others.
std::uint64_t launch_of(const ControlHandler& handler, const protocol::Hello& hello) {
  const auto* trial = std::get_if<protocol::TrialHello>(&hello.from);
  return trial ? handler.launch_of(trial->trial) : 0;
}

protocol::UniqueFd listen_on(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    throw Error("control plane: cannot resolve listen address '" + host + "': " + gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owner(found, ::freeaddrinfo);
  std::string last_error = "no address";
  for (const addrinfo* a = found; a; a = a->ai_next) {
    protocol::UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) continue;
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd.get(), 1024) == 0)
      return fd;
    last_error = std::strerror(errno);
  }
  throw Error("control plane: cannot listen on " + host + ":" + service + ": " + last_error);
}

std::uint16_t bound_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    protocol::throw_errno("getsockname");
  const auto* sa = reinterpret_cast<const sockaddr*>(&address);
  if (sa->sa_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(sa)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(sa)->sin_port);
}

std::string peer_name(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "?";
  std::uint16_t port = 0;
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    port = ntohs(in6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

// At most a quarter of this process's descriptors wait for a HELLO, and half are
// authenticated: peers that never authenticate cannot take the descriptors that trials'
// connections need, and trials cannot take those of the log files and the results file.
std::size_t descriptor_share_cap(std::size_t wanted, std::size_t divisor) {
  rlimit limit{};
  std::size_t cap = wanted;
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    cap = std::min<std::size_t>(cap, static_cast<std::size_t>(limit.rlim_cur / divisor));
  return std::max<std::size_t>(cap, 1);
}

// Connections accepted per readiness of the listener (see control_server.hpp).
constexpr std::size_t kAcceptBatch = 32;

}  // namespace

ControlServer::ControlServer(EventLoop& loop, ControlHandler& handler, std::string secret,
                             const ControlServerOptions& options)
    : loop_(loop),
      handler_(handler),
      secret_(std::move(secret)),
      hello_timeout_s_(options.hello_timeout_s),
      max_unauthenticated_(descriptor_share_cap(options.max_unauthenticated, 4)),
      max_authenticated_(descriptor_share_cap(options.max_authenticated, 2)),
      listener_(listen_on(options.listen_host, options.port)),
      port_(bound_port(listener_.get())) {
  loop_.add(listener_.get(), EPOLLIN, [this](std::uint32_t) { accept_all(); });
}

ControlServer::~ControlServer() {
  for (auto& [id, c] : connections_)
    loop_.remove(c.fd.get());
  loop_.remove(listener_.get());
}

void ControlServer::out_of_descriptors(int error) {
  ++stats_.accept_failures;
  peer_log_.line(std::string("control plane: accept failed: ") + std::strerror(error) +
                 "; not accepting until a descriptor frees (open " +
                 std::to_string(connections_.size()) + " connection(s))");
  if (paused_since_) return;
  paused_since_ = std::chrono::steady_clock::now();
  ++stats_.accept_pauses;
  loop_.modify(listener_.get(), 0);
}

void ControlServer::resume_accepting() {
  if (!paused_since_) return;
  paused_since_.reset();
  loop_.modify(listener_.get(), EPOLLIN);
}

bool ControlServer::evict_oldest_unauthenticated(const std::string& why) {
  for (const auto& [id, c] : connections_)
    if (!c.authenticated) {
      ++stats_.evicted;
      close_for_retry(id, why);
      return true;
    }
  return false;
}

void ControlServer::accept_all() {
  // Half the cap at most: a connection accepted in one turn has its HELLO read in the
  // next, before the connections accepted after it could reach the cap.
  const std::size_t batch = std::clamp<std::size_t>(max_unauthenticated_ / 2, 1, kAcceptBatch);
  for (std::size_t accepted = 0; accepted < batch;) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    protocol::UniqueFd fd(::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length,
                                    SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR || errno == ECONNABORTED) continue;
      const int error = errno;  // EMFILE, ENFILE, ENOBUFS, ENOMEM
      if ((error == EMFILE || error == ENFILE) &&
          evict_oldest_unauthenticated("no descriptor left for a new connection; closing the "
                                       "oldest one without HELLO"))
        continue;
      return out_of_descriptors(error);
    }
    ++accepted;
    if (unauthenticated_ >= max_unauthenticated_)
      evict_oldest_unauthenticated("more than " + std::to_string(max_unauthenticated_) +
                                   " connections without HELLO; closing the oldest");
    const int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const ConnectionId id = next_id_++;
    Connection& c = connections_[id];
    c.fd = std::move(fd);
    c.peer = peer_name(address);
    c.since = std::chrono::steady_clock::now();
    ++unauthenticated_;
    ++stats_.accepted;
    loop_.add(c.fd.get(), EPOLLIN | EPOLLRDHUP, [this, id](std::uint32_t events) {
      if (events & EPOLLOUT) on_writable(id);
      if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(id);
    });
  }
}

void ControlServer::on_readable(ConnectionId id) {
  std::array<char, 65536> buffer;
  for (;;) {
    const auto it = connections_.find(id);
    if (it == connections_.end()) return;
    Connection& c = it->second;
    const ssize_t n = ::recv(c.fd.get(), buffer.data(), buffer.size(), 0);
    if (n == 0) return drop(id, "connection closed by the client", c.authenticated);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      return drop(id, std::string("receive failed: ") + std::strerror(errno), c.authenticated);
    }
    try {
      c.decoder.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      while (const auto frame = c.decoder.next()) {
        ++stats_.frames;
        handle(id, c, *frame);
        if (!connections_.contains(id)) return;
      }
    } catch (const protocol::ProtocolError& e) {
      return refuse(id, e.what());
    }
    // A short read drained the socket: skip the recv that would only say EAGAIN
    // (level-triggered epoll reports anything that arrives later).
    if (static_cast<std::size_t>(n) < buffer.size()) return;
  }
}

void ControlServer::handle(ConnectionId id, Connection& c, const protocol::Frame& frame) {
  if (!c.authenticated) return authenticate(id, c, frame);
  if (frame.type == protocol::MessageType::Hello)
    throw protocol::ProtocolError("HELLO sent twice on one connection");
  const auto reply = handler_.on_message(id, frame.type, protocol::payload_object(frame));
  // The handler may have closed this very connection (its trial ended): `c` is gone then.
  const auto it = connections_.find(id);
  if (reply && it != connections_.end()) queue(id, it->second, reply->type, reply->payload);
}

void ControlServer::queue(ConnectionId id, Connection& c, protocol::MessageType type,
                          const std::string& payload) {
  c.outbox += protocol::encode_frame(type, payload);
  flush(id, c);
  const auto it = connections_.find(id);
  if (it == connections_.end() || it->second.outbox.size() <= kMaxOutbox) return;
  ++stats_.unread;
  refuse(id, "more than " + std::to_string(kMaxOutbox >> 20) +
                 " MiB of replies unread; a client reads each reply before its next request");
}

void ControlServer::authenticate(ConnectionId id, Connection& c, const protocol::Frame& frame) {
  if (c.challenged_hello) return check_proof(id, c, frame);
  if (frame.type != protocol::MessageType::Hello)
    throw protocol::ProtocolError("first message is " + std::string(to_string(frame.type)) +
                                  ", not HELLO");
  protocol::Hello hello = protocol::decode_hello(protocol::payload_object(frame));
  if (!hello.challenge.empty()) return challenge(id, c, std::move(hello));
  // The credential covers exactly what the HELLO claims: another trial's, attempt's or
  // step's is refused (it names only what the peer itself sent).
  if (!protocol::tokens_equal(
          hello.token, protocol::credential_for(secret_, hello.from, launch_of(handler_, hello))))
    throw protocol::ProtocolError("wrong or missing credential for " +
                                  protocol::claim_of(hello.from));
  welcome(id, c, hello);
}

// The client proves itself second: a peer that does not hold the token learns only a
// proof bound to nonces that never come again.
void ControlServer::challenge(ConnectionId id, Connection& c, protocol::Hello hello) {
  c.client_nonce = hello.challenge;
  c.server_nonce = protocol::generate_token();
  c.key = protocol::credential_for(secret_, hello.from, launch_of(handler_, hello));
  c.challenged_hello = std::move(hello);
  c.outbox += protocol::encode_frame(
      protocol::MessageType::Challenge,
      protocol::encode(protocol::Challenge{
          c.server_nonce, protocol::coordinator_proof(c.key, c.client_nonce, c.server_nonce)}));
  flush(id, c);
}

void ControlServer::check_proof(ConnectionId id, Connection& c, const protocol::Frame& frame) {
  if (frame.type != protocol::MessageType::Proof)
    throw protocol::ProtocolError("after CHALLENGE came " + std::string(to_string(frame.type)) +
                                  ", not PROOF");
  const protocol::Proof proof = protocol::decode_proof(protocol::payload_object(frame));
  if (!protocol::tokens_equal(proof.proof,
                              protocol::worker_proof(c.key, c.server_nonce, c.client_nonce)))
    throw protocol::ProtocolError("wrong proof of the credential for " +
                                  protocol::claim_of(c.challenged_hello->from));
  const protocol::Hello hello = std::move(*c.challenged_hello);
  c.challenged_hello.reset();
  welcome(id, c, hello);
}

void ControlServer::welcome(ConnectionId id, Connection& c, const protocol::Hello& hello) {
  if (connections_.size() - unauthenticated_ >= max_authenticated_) {
    ++stats_.over_capacity;
    return close_for_retry(id, std::to_string(max_authenticated_) +
                                   " connections are open already; the client tries again");
  }
  // Asked before the connection counts as authenticated: a HELLO the study refuses (an
  // ended attempt's leftover process, a second rank 0) is a peer's doing, logged through
  // the throttled log like any refusal a peer can provoke, not once per try for ever.
  const std::string welcome = handler_.on_hello(id, hello.from);
  c.authenticated = true;
  --unauthenticated_;
  ++stats_.authenticated;
  queue(id, c, protocol::MessageType::Welcome, welcome);
}

void ControlServer::refuse(ConnectionId id, const std::string& reason) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = it->second;
  ++stats_.refused;
  const std::string line = "control plane: closing connection from " + c.peer + ": " + reason;
  // Authenticated peers are the study's own; anyone can provoke the others.
  if (c.authenticated)
    log_line(line);
  else
    peer_log_.line(line);
  // Best effort, without blocking: the peer learns why, if it still listens.
  const std::string frame = protocol::encode_frame(protocol::MessageType::Error,
                                                   protocol::encode(protocol::ErrorReply{reason}));
  [[maybe_unused]] const ssize_t sent =
      ::send(c.fd.get(), frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  drop(id, reason, c.authenticated);
}

void ControlServer::close_for_retry(ConnectionId id, const std::string& reason) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  peer_log_.line("control plane: closing connection from " + it->second.peer + ": " + reason);
  drop(id, reason, it->second.authenticated);
}

void ControlServer::send(ConnectionId id, protocol::MessageType type, const std::string& payload) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  queue(id, it->second, type, payload);
}

void ControlServer::close(ConnectionId id, const std::string& reason) {
  refuse(id, reason);
}

void ControlServer::flush(ConnectionId id, Connection& c) {
  while (!c.outbox.empty()) {
    const ssize_t n = ::send(c.fd.get(), c.outbox.data(), c.outbox.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (!c.want_write) loop_.modify(c.fd.get(), EPOLLIN | EPOLLRDHUP | EPOLLOUT);
        c.want_write = true;
        return;
      }
      return drop(id, std::string("send failed: ") + std::strerror(errno), c.authenticated);
    }
    c.outbox.erase(0, static_cast<std::size_t>(n));
  }
  if (c.want_write) loop_.modify(c.fd.get(), EPOLLIN | EPOLLRDHUP);
  c.want_write = false;
}

void ControlServer::on_writable(ConnectionId id) {
  const auto it = connections_.find(id);
  if (it != connections_.end()) flush(id, it->second);
}

void ControlServer::tick() {
  const auto now = std::chrono::steady_clock::now();
  if (paused_since_ && now - *paused_since_ >= std::chrono::milliseconds(500)) resume_accepting();
  peer_log_.tick();
  std::vector<ConnectionId> silent;
  for (const auto& [id, c] : connections_)
    if (!c.authenticated && std::chrono::duration<double>(now - c.since).count() > hello_timeout_s_)
      silent.push_back(id);
  for (const ConnectionId id : silent)
    close_for_retry(id, "no HELLO within " + core::format_double(hello_timeout_s_) + " s");
}

void ControlServer::drop(ConnectionId id, const std::string& reason, bool tell_handler) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  loop_.remove(it->second.fd.get());
  if (!it->second.authenticated) --unauthenticated_;
  connections_.erase(it);
  resume_accepting();  // a descriptor is free again
  if (tell_handler) handler_.on_closed(id, reason);
}

}  // namespace slurmtune::runtime
