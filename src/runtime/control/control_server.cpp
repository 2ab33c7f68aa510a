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
#include <limits>
#include <memory>
#include <vector>

#include "core/number_text.hpp"
#include "protocol/auth_messages.hpp"
#include "protocol/route_messages.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {
namespace {

// What a HELLO's credential must cover: a trial's running launch, and who derived it.
protocol::AttemptGrant grant_of(const ControlHandler& handler, const protocol::Hello& hello) {
  const auto* trial = std::get_if<protocol::TrialHello>(&hello.from);
  return trial ? handler.attempt_grant(trial->trial) : protocol::AttemptGrant{};
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

// This process's descriptor limit (the soft one, which the coordinator raised to the
// hard one at start).
int descriptor_ceiling() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur > static_cast<rlim_t>(std::numeric_limits<int>::max()))
    return std::numeric_limits<int>::max();
  return static_cast<int>(limit.rlim_cur);
}

// At most a quarter of this process's descriptors wait for a HELLO, and half are
// authenticated: peers that never authenticate cannot take the descriptors that trials'
// connections need, and trials cannot take those of the log files and the results file.
std::size_t descriptor_share_cap(std::size_t wanted, std::size_t divisor) {
  const auto share = static_cast<std::size_t>(descriptor_ceiling()) / divisor;
  return std::max<std::size_t>(std::min(wanted, share), 1);
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
      max_channels_per_agent_(std::max<std::size_t>(options.max_channels_per_agent, 1)),
      listener_(listen_on(options.listen_host, options.port)),
      port_(bound_port(listener_.get())),
      descriptor_ceiling_(descriptor_ceiling()) {
  loop_.add(listener_.get(), EPOLLIN, [this](std::uint32_t) { accept_all(); });
}

ControlServer::~ControlServer() {
  for (auto& [id, c] : connections_)
    if (c.fd) loop_.remove(c.fd.get());
  loop_.remove(listener_.get());
}

ControlServerStats ControlServer::stats() const {
  ControlServerStats now = stats_;
  now.peer_lines_left_out = peer_log_.left_out();
  now.open = unauthenticated_ + direct_authenticated_;
  now.channels = connections_.size() - now.open;
  now.max_authenticated = max_authenticated_;
  return now;
}

void ControlServer::out_of_descriptors(const std::string& why) {
  ++stats_.accept_failures;
  peer_log_.line("control plane: " + why + "; not accepting until a descriptor frees (open " +
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
  for (const ConnectionId id : waiting_hello_)
    if (connections_.at(id).fd) {
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
      return out_of_descriptors(std::string("accept failed: ") + std::strerror(error));
    }
    // Descriptors are handed out lowest first: one this high means at most
    // kDescriptorsKept are left, and those stay free for the rest of the process. As on
    // EMFILE, the oldest connection without HELLO makes room first, if there is one.
    if (fd.get() >= descriptor_ceiling_ - kDescriptorsKept &&
        !evict_oldest_unauthenticated("no descriptor to spare for a new connection; closing the "
                                      "oldest one without HELLO")) {
      const std::string busy = protocol::encode_frame(
          protocol::MessageType::Busy,
          protocol::encode(protocol::Busy{"no descriptor to spare for a new connection", 1.0}));
      [[maybe_unused]] const ssize_t sent =
          ::send(fd.get(), busy.data(), busy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      return out_of_descriptors("descriptor " + std::to_string(fd.get()) + " of " +
                                std::to_string(descriptor_ceiling_) + " taken by a new connection");
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
    waiting_hello_.insert(id);
    ++unauthenticated_;
    ++stats_.accepted;
    stats_.peak_open = std::max(stats_.peak_open, unauthenticated_ + direct_authenticated_);
    loop_.add(c.fd.get(), EPOLLIN | EPOLLRDHUP, [this, id](std::uint32_t events) {
      if (events & EPOLLOUT)
        if (const auto it = connections_.find(id); it != connections_.end()) flush(id, it->second);
      if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(id);
    });
  }
}

// What one read carried is answered in one send once it is handled (a node agent's read
// carries the reports of many trials), and a connection is read at most kChunksPerRead
// times a turn: level-triggered epoll reports the rest, after the other connections.
void ControlServer::on_readable(ConnectionId id) {
  reading_ = id;
  read_chunks(id);
  reading_ = 0;
  if (const auto it = connections_.find(id); it != connections_.end()) flush(id, it->second);
}

void ControlServer::read_chunks(ConnectionId id) {
  std::array<char, kReadChunk> buffer;
  for (int chunk = 0; chunk < kChunksPerRead; ++chunk) {
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
  if (frame.type == protocol::MessageType::Routed ||
      frame.type == protocol::MessageType::ChannelClosed)
    return route(id, c, frame);
  const auto reply = handler_.on_message(id, frame.type, protocol::payload_object(frame));
  // The handler may have closed this very connection (its trial ended): `c` is gone then.
  const auto it = connections_.find(id);
  if (reply && it != connections_.end())
    queue(id, it->second, protocol::encode_frame(reply->type, reply->payload));
}

void ControlServer::route(ConnectionId id, Connection& agent, const protocol::Frame& frame) {
  if (!agent.routes)
    throw protocol::ProtocolError(std::string(to_string(frame.type)) +
                                  " from a connection that is not a node agent's");
  if (frame.type == protocol::MessageType::ChannelClosed) {
    const auto closed = protocol::decode_channel_closed(protocol::payload_object(frame));
    if (const auto it = agent.channels.find(closed.channel); it != agent.channels.end()) {
      const ConnectionId channel = it->second;
      drop(channel, "its node agent says: " + closed.reason,
           connections_.at(channel).authenticated);
    }
    return;
  }
  const protocol::Routed routed = protocol::decode_routed(frame);
  ++stats_.routed;
  ConnectionId channel_id = 0;
  if (const auto it = agent.channels.find(routed.channel); it != agent.channels.end()) {
    channel_id = it->second;
  } else {
    channel_id = next_id_++;
    Connection& channel = connections_[channel_id];
    channel.peer = agent.peer + " channel " + std::to_string(routed.channel);
    channel.since = std::chrono::steady_clock::now();
    waiting_hello_.insert(channel_id);
    channel.via = id;
    channel.channel = routed.channel;
    agent.channels.emplace(routed.channel, channel_id);
    stats_.peak_channels = std::max(stats_.peak_channels,
                                    connections_.size() - unauthenticated_ - direct_authenticated_);
    if (agent.channels.size() > max_channels_per_agent_)
      return close_for_retry(channel_id, "the node agent carries " +
                                             std::to_string(max_channels_per_agent_) +
                                             " channels already");
  }
  Connection& channel = connections_.at(channel_id);
  try {
    handle(channel_id, channel, routed.frame);
  } catch (const protocol::ProtocolError& e) {
    refuse(channel_id, e.what());  // the channel's fault, not its agent's
  }
}

void ControlServer::queue(ConnectionId id, Connection& c, const std::string& frame) {
  if (c.via) {
    const auto agent = connections_.find(c.via);
    if (agent != connections_.end())
      queue(c.via, agent->second, protocol::encode_routed(c.channel, frame));
    return;
  }
  const std::size_t bound = c.routes ? kMaxAgentOutbox : kMaxOutbox;
  c.outbox += frame;
  if (id != reading_) flush(id, c);  // may drop it: `c` is not used after this
  const auto it = connections_.find(id);
  if (it == connections_.end() || it->second.outbox.size() <= bound) return;
  ++stats_.unread;
  refuse(id, "more than " + std::to_string(bound >> 20) +
                 " MiB of replies unread; a client reads each reply before its next request");
}

void ControlServer::authenticate(ConnectionId id, Connection& c, const protocol::Frame& frame) {
  std::string challenge;
  const auto hello = c.hello_check.on_frame(
      frame, secret_, [this](const protocol::Hello& h) { return grant_of(handler_, h); },
      challenge);
  if (hello) return welcome(id, c, *hello);
  queue(id, c, challenge);
}

void ControlServer::welcome(ConnectionId id, Connection& c, const protocol::Hello& hello) {
  if (!c.via && direct_authenticated_ >= max_authenticated_) {
    // A running trial's reporter may use a reserve: the ranks that only ask, the
    // monitors and the leftovers cannot keep a trial from reporting.
    const auto* trial = std::get_if<protocol::TrialHello>(&hello.from);
    const bool reporter = trial && trial->rank == 0 && grant_of(handler_, hello).launch != 0;
    if (!reporter || direct_authenticated_ >= max_authenticated_ + max_authenticated_ / 4) {
      ++stats_.over_capacity;
      return close_for_retry(
          id, std::to_string(direct_authenticated_) + " connections are open already");
    }
  }
  if (c.via) handler_.check_routed(c.via, hello.from);
  // Asked before the connection counts as authenticated: a HELLO the study refuses (an
  // ended attempt's leftover process, a second rank 0) is a peer's doing, logged through
  // the throttled log like any refusal a peer can provoke, not once per try for ever.
  std::string welcome;
  try {
    welcome = handler_.on_hello(id, hello.from);
  } catch (const NoRoom& e) {
    ++stats_.over_capacity;
    return close_for_retry(id, e.what(), e.retry_after_s());
  }
  c.authenticated = true;
  waiting_hello_.erase(id);
  if (!c.via) {
    --unauthenticated_;
    ++direct_authenticated_;
  }
  c.routes = handler_.routes(id);
  ++stats_.authenticated;
  queue(id, c, protocol::encode_frame(protocol::MessageType::Welcome, welcome));
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
  end_with(id, c,
           protocol::encode_frame(protocol::MessageType::Error,
                                  protocol::encode(protocol::ErrorReply{reason})),
           reason);
}

void ControlServer::close_for_retry(ConnectionId id, const std::string& reason,
                                    double retry_after_s) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  peer_log_.line("control plane: closing connection from " + it->second.peer + ": " + reason +
                 "; the client tries again");
  end_with(id, it->second,
           protocol::encode_frame(protocol::MessageType::Busy,
                                  protocol::encode(protocol::Busy{reason, retry_after_s})),
           reason);
}

void ControlServer::end_with(ConnectionId id, Connection& c, const std::string& last,
                             const std::string& reason) {
  if (const ConnectionId via = c.via) {
    // The agent passes the last frame on, then closes its local end. (Queuing may end
    // the agent's connection, and this channel with it: `c` is not used after it.)
    const std::string closed =
        protocol::encode_frame(protocol::MessageType::ChannelClosed,
                               protocol::encode(protocol::ChannelClosed{c.channel, reason}));
    queue(id, c, last);
    if (const auto agent = connections_.find(via); agent != connections_.end())
      queue(via, agent->second, closed);
  } else {
    // Best effort, without blocking, after the replies queued before it: the peer
    // learns why, if it still listens.
    c.outbox += last;
    [[maybe_unused]] const ssize_t sent =
        ::send(c.fd.get(), c.outbox.data(), c.outbox.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  if (const auto it = connections_.find(id); it != connections_.end())
    drop(id, reason, it->second.authenticated);
}

void ControlServer::send(ConnectionId id, protocol::MessageType type, const std::string& payload) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  queue(id, it->second, protocol::encode_frame(type, payload));
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

void ControlServer::tick() {
  const auto now = std::chrono::steady_clock::now();
  if (paused_since_ && now - *paused_since_ >= std::chrono::milliseconds(500)) resume_accepting();
  peer_log_.tick();
  // The oldest first (ids grow with time): the walk stops at the first still in time.
  std::vector<ConnectionId> silent;
  for (const ConnectionId id : waiting_hello_) {
    if (std::chrono::duration<double>(now - connections_.at(id).since).count() <= hello_timeout_s_)
      break;
    silent.push_back(id);
  }
  for (const ConnectionId id : silent)
    close_for_retry(id, "no HELLO within " + core::format_double(hello_timeout_s_) + " s");
}

void ControlServer::drop(ConnectionId id, const std::string& reason, bool tell_handler) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = it->second;
  const bool direct = !c.via;
  waiting_hello_.erase(id);
  if (direct) {
    loop_.remove(c.fd.get());
    --(c.authenticated ? direct_authenticated_ : unauthenticated_);
  } else if (const auto agent = connections_.find(c.via); agent != connections_.end()) {
    agent->second.channels.erase(c.channel);
  }
  const auto channels = std::move(c.channels);
  connections_.erase(it);
  if (direct) resume_accepting();  // a descriptor is free again
  if (tell_handler) handler_.on_closed(id, reason);
  // An agent's channels end with it (its handler has ended its trials already).
  for (const auto& [number, channel] : channels)
    if (const auto ch = connections_.find(channel); ch != connections_.end())
      drop(channel, "its node agent's connection ended: " + reason, ch->second.authenticated);
}

}  // namespace slurmtune::runtime
