#include "runtime/worker/node_agent.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "protocol/auth_messages.hpp"
#include "protocol/route_messages.hpp"
#include "protocol/session_messages.hpp"
#include "protocol/wire/json_value.hpp"
#include "runtime/this_process.hpp"

namespace slurmtune::runtime {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFolderPrefix = "slurmtune-agent-";
constexpr const char* kLockName = "/agent.lock";

// An agent killed outright (its node's step cancelled, SIGKILL) cannot remove its folder:
// the next agent on the node does. A folder of this user whose lock file nobody holds
// locked is a dead agent's (the kernel drops a lock with its process). One without a
// lock file yet is left: its agent may be making it.
void remove_dead_agents_folders(const std::string& base) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    if (!entry.path().filename().string().starts_with(kFolderPrefix)) continue;
    struct stat info {};
    if (::lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != ::getuid())
      continue;
    const std::string lock = entry.path().string() + kLockName;
    const protocol::UniqueFd fd(::open(lock.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;  // alive, or not ours
    std::error_code ignored;
    fs::remove_all(entry.path(), ignored);
  }
}

// A private folder for the socket in `base` ("": $TMPDIR) when a socket path there fits,
// else in /tmp.
std::string private_folder(std::string base) {
  if (base.empty()) base = node_temporary_folder();
  if (base.size() > 80) base = "/tmp";  // sun_path holds 108 bytes with "/agent.sock"
  remove_dead_agents_folders(base);
  std::string pattern = base + "/" + std::string(kFolderPrefix) + "XXXXXX";
  if (!::mkdtemp(pattern.data()))  // 0700: the study's user alone reaches the socket
    throw Error("node agent: cannot create a folder in " + base + ": " + std::strerror(errno));
  return pattern;
}

// The lock that says the agent of `folder` lives, held until it ends. Locked before it
// takes its name, so that no other agent sees the file unlocked.
protocol::UniqueFd hold_folder(const std::string& folder) {
  const std::string lock = folder + kLockName, making = lock + ".new";
  protocol::UniqueFd fd(::open(making.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd || ::flock(fd.get(), LOCK_EX) != 0 || ::rename(making.c_str(), lock.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::error_code ignored;
    fs::remove_all(folder, ignored);
    throw Error("node agent: cannot make its lock " + lock + ": " + why);
  }
  return fd;
}

protocol::UniqueFd listen_unix(const std::string& path) {
  sockaddr_un where{};
  where.sun_family = AF_UNIX;
  path.copy(where.sun_path, sizeof where.sun_path - 1);
  protocol::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd || ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&where), sizeof where) != 0 ||
      ::listen(fd.get(), 1024) != 0)
    throw Error("node agent: cannot listen on " + path + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

NodeAgent::NodeAgent(EventLoop& loop, std::function<void(const std::string&)> up,
                     std::function<bool(core::TrialId)> hosts, const std::string& folder_base)
    : loop_(loop),
      up_(std::move(up)),
      hosts_(std::move(hosts)),
      folder_(private_folder(folder_base)),
      socket_path_(folder_ + "/agent.sock"),
      lock_(hold_folder(folder_)) {
  try {
    listener_ = listen_unix(socket_path_);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
    throw;
  }
  loop_.add(listener_.get(), EPOLLIN,
            [this](std::uint32_t) { accept_all(listener_.get(), false); });
}

void NodeAgent::carry_agents(protocol::UniqueFd listener) {
  agent_listener_ = std::move(listener);
  loop_.add(agent_listener_.get(), EPOLLIN,
            [this](std::uint32_t) { accept_all(agent_listener_.get(), true); });
}

NodeAgent::~NodeAgent() {
  for (auto& [number, c] : channels_)
    loop_.remove(c.fd.get());
  loop_.remove(listener_.get());
  if (agent_listener_) loop_.remove(agent_listener_.get());
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

void NodeAgent::accept_all(int listener, bool agents) {
  for (;;) {
    protocol::UniqueFd fd(::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) return;  // EAGAIN, or out of descriptors: the peer waits in the backlog
    // Over the bound it is closed: the client tries again (an agent, directly).
    if (agents ? agents_ >= kMaxRelayedAgents : channels_.size() - agents_ >= kMaxLocalChannels)
      continue;
    const std::uint64_t number = next_channel_++;
    Channel& c = channels_[number];
    c.agent = agents;
    agents_ += agents ? 1 : 0;
    c.fd = std::move(fd);
    c.since = std::chrono::steady_clock::now();
    loop_.add(c.fd.get(), EPOLLIN | EPOLLRDHUP, [this, number](std::uint32_t events) {
      if (events & EPOLLOUT)
        if (const auto it = channels_.find(number); it != channels_.end())
          flush(number, it->second);
      if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(number);
    });
  }
}

void NodeAgent::on_readable(std::uint64_t number) {
  std::array<char, 65536> buffer;
  const auto it = channels_.find(number);
  if (it == channels_.end()) return;
  Channel& c = it->second;
  const ssize_t n = ::recv(c.fd.get(), buffer.data(), buffer.size(), 0);
  if (n == 0) return close(number, "the process closed its connection", true);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    return close(number, std::string("receive failed: ") + std::strerror(errno), true);
  }
  try {
    c.decoder.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    while (const auto frame = c.decoder.next()) {
      if (!c.said_hello) check_hello(*frame, c.agent);
      c.said_hello = true;
      up_(protocol::encode_routed(number, protocol::encode_frame(frame->type, frame->payload)));
    }
  } catch (const protocol::ProtocolError& e) {
    refuse(number, e.what());
  }
}

void NodeAgent::check_hello(const protocol::Frame& frame, bool agent) const {
  if (frame.type != protocol::MessageType::Hello)
    throw protocol::ProtocolError("first message is " + std::string(to_string(frame.type)) +
                                  ", not HELLO");
  const protocol::Hello hello = protocol::decode_hello(protocol::payload_object(frame));
  if (agent) {
    if (!std::holds_alternative<protocol::WorkerHello>(hello.from))
      throw protocol::ProtocolError("a relay carries only the study's workers' connections");
    return;
  }
  const auto* trial = std::get_if<protocol::TrialHello>(&hello.from);
  if (!trial) throw protocol::ProtocolError("a node agent carries only trials' connections");
  if (!hosts_(trial->trial))
    throw protocol::ProtocolError("trial " + std::to_string(trial->trial) +
                                  " does not run on this node");
}

void NodeAgent::from_coordinator(const protocol::Frame& frame) {
  if (frame.type == protocol::MessageType::ChannelClosed) {
    const auto closed = protocol::decode_channel_closed(protocol::payload_object(frame));
    if (const auto it = channels_.find(closed.channel); it != channels_.end()) {
      flush(closed.channel, it->second);  // its ERROR or BUSY, if the socket takes it
      close(closed.channel, closed.reason, false);
    }
    return;
  }
  protocol::Routed routed = protocol::decode_routed(frame);
  deliver(routed.channel, protocol::encode_frame(routed.frame.type, routed.frame.payload));
}

void NodeAgent::deliver(std::uint64_t number, const std::string& frame) {
  const auto it = channels_.find(number);
  if (it == channels_.end()) return;  // closed here already; the coordinator learns it
  Channel& c = it->second;
  c.outbox += frame;
  flush(number, c);
  // An agent carries every trial of its node: it may fall further behind.
  const std::size_t bound = protocol::kMaxPayload * (c.agent ? 256 : 16);
  if (const auto again = channels_.find(number);
      again != channels_.end() && again->second.outbox.size() > bound)
    close(number, "more than " + std::to_string(bound >> 20) + " MiB of replies unread", true);
}

void NodeAgent::flush(std::uint64_t number, Channel& c) {
  while (!c.outbox.empty()) {
    const ssize_t n = ::send(c.fd.get(), c.outbox.data(), c.outbox.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!c.want_write) loop_.modify(c.fd.get(), EPOLLIN | EPOLLRDHUP | EPOLLOUT);
      c.want_write = true;
      return;
    }
    if (n < 0) return close(number, std::string("send failed: ") + std::strerror(errno), true);
    c.outbox.erase(0, static_cast<std::size_t>(n));
  }
  if (c.want_write) loop_.modify(c.fd.get(), EPOLLIN | EPOLLRDHUP);
  c.want_write = false;
}

void NodeAgent::close(std::uint64_t number, const std::string& reason, bool tell) {
  const auto it = channels_.find(number);
  if (it == channels_.end()) return;
  loop_.remove(it->second.fd.get());
  const bool said_hello = it->second.said_hello;
  agents_ -= it->second.agent ? 1 : 0;
  channels_.erase(it);
  // A channel that never said HELLO never reached the coordinator.
  if (tell && said_hello)
    up_(protocol::encode_frame(protocol::MessageType::ChannelClosed,
                               protocol::encode(protocol::ChannelClosed{number, reason})));
}

void NodeAgent::refuse(std::uint64_t number, const std::string& reason) {
  const auto it = channels_.find(number);
  if (it == channels_.end()) return;
  const std::string frame =
      protocol::encode_frame(protocol::MessageType::Error,
                             protocol::encode(protocol::ErrorReply{"node agent: " + reason}));
  [[maybe_unused]] const ssize_t sent =
      ::send(it->second.fd.get(), frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  close(number, reason, true);
}

void NodeAgent::tick() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::uint64_t> silent;
  for (const auto& [number, c] : channels_)
    if (!c.said_hello && std::chrono::duration<double>(now - c.since).count() > kHelloWithinS)
      silent.push_back(number);
  for (const std::uint64_t number : silent)
    refuse(number, "no HELLO within 10 s");
}

}  // namespace slurmtune::runtime
