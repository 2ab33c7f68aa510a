#define BOOST_TEST_MODULE runtime_control_server_limits
// What bounds each peer of the control server: connections without HELLO, connections
// in all, a client that never reads, descriptors running out, and the log of refusals.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <set>

#include "protocol/route_messages.hpp"
#include "unit/runtime/control/control_server_fixture.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
using slurmtune::testing::connect_loopback;
using slurmtune::testing::connect_to;
using slurmtune::testing::exchange_on;
using Fixture = slurmtune::testing::ControlServerFixture;
using slurmtune::testing::error_text;

// Peers that never say HELLO hold at most max_unauthenticated connections: each new one
// closes the oldest, and an authenticated connection is never closed for them.
struct SmallFixture : Fixture {
  SmallFixture() : Fixture(4) {}
};

BOOST_FIXTURE_TEST_CASE(connections_without_hello_are_capped_oldest_closed_first, SmallFixture) {
  const auto trial = connect();
  BOOST_TEST((exchange(trial.get(), hello()).first.at(0).type == protocol::MessageType::Welcome));
  std::vector<protocol::UniqueFd> idle;
  for (int i = 0; i < 10; ++i)
    idle.push_back(connect());
  pump();
  BOOST_TEST(server.stats().evicted == 6u);
  for (int i = 0; i < 10; ++i) {
    const auto [frames, closed] = exchange(idle[static_cast<std::size_t>(i)].get(), "");
    BOOST_TEST(closed == (i < 6), "idle connection " << i);
    // BUSY when evicted, never ERROR (which the clients take as final).
    BOOST_TEST(frames.size() == (i < 6 ? 1u : 0u), "idle connection " << i);
    for (const auto& frame : frames)
      BOOST_TEST((frame.type == protocol::MessageType::Busy), "idle connection " << i);
  }
  const auto [frames, closed] = exchange(
      trial.get(),
      protocol::encode_frame(protocol::MessageType::Report, R"({"step": 1, "metrics": {}})"));
  BOOST_TEST(!closed);
  BOOST_TEST((frames.at(0).type == protocol::MessageType::Decision));
}

// Issue #41 (3): a client that pipelines requests without reading the replies is closed
// once they pass kMaxOutbox (the coordinator grew from 22 MB to 489 MB in 6 s).
BOOST_FIXTURE_TEST_CASE(a_client_that_never_reads_its_replies_is_closed, Fixture) {
  // A small receive buffer, set before connecting: the kernel holds little of the replies.
  protocol::UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  const int small = 4096;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  connect_loopback(fd.get(), server.port());
  pump();
  BOOST_TEST((exchange(fd.get(), hello()).first.at(0).type == protocol::MessageType::Welcome));
  const std::string report =
      protocol::encode_frame(protocol::MessageType::Report, R"({"step": 1, "metrics": {}})");
  std::string burst;
  for (int i = 0; i < 2000; ++i)
    burst += report;
  ::fcntl(fd.get(), F_SETFL, O_NONBLOCK);
  // Bounded in bytes and in turns: the test ends even if the cap never trips, or the
  // server stops reading and every send says EAGAIN.
  std::size_t sent_total = 0;
  for (int turn = 0;
       turn < 20000 && server.stats().unread == 0 && sent_total < (std::size_t{256} << 20);
       ++turn) {
    const ssize_t sent = ::send(fd.get(), burst.data(), burst.size(), MSG_NOSIGNAL);
    if (sent > 0) sent_total += static_cast<std::size_t>(sent);
    if (sent < 0 && errno != EAGAIN) break;
    pump(1);
  }
  BOOST_TEST(server.stats().unread == 1u);
  BOOST_TEST(handler.closed == 1);  // the study is told, as for any closed connection
}

// At most max_authenticated connections: a HELLO past it is told BUSY (the client tries
// again when it says) and the others are untouched.
struct TwoConnectionsFixture : Fixture {
  TwoConnectionsFixture() : Fixture(128, 5, 2) {}
};

BOOST_FIXTURE_TEST_CASE(authenticated_connections_are_capped, TwoConnectionsFixture) {
  std::vector<protocol::UniqueFd> fds;
  std::vector<std::pair<std::vector<protocol::Frame>, bool>> answers;
  for (int i = 0; i < 3; ++i) {
    fds.push_back(connect());
    answers.push_back(exchange(fds.back().get(), hello()));
  }
  BOOST_TEST(handler.hellos == 2);
  BOOST_TEST(server.stats().over_capacity == 1u);
  BOOST_TEST(!answers[1].second);
  BOOST_TEST(answers[2].second);  // closed, with BUSY and not ERROR
  BOOST_REQUIRE(answers[2].first.size() == 1u);
  BOOST_TEST((answers[2].first[0].type == protocol::MessageType::Busy));
  const auto busy = protocol::decode_busy(protocol::payload_object(answers[2].first[0]));
  BOOST_TEST(busy.retry_after_s == kBusyRetryS);
  BOOST_TEST(busy.why == "2 connections are open already");
}

namespace {
// A running trial's reporter: trial 5 runs its launch 1.
struct RunningTrialHandler final : ControlHandler {
  int hellos = 0;
  std::string on_hello(ConnectionId, const protocol::HelloFrom&) override {
    ++hellos;
    return "{}";
  }
  std::optional<Reply> on_message(ConnectionId, protocol::MessageType,
                                  const protocol::JsonObject&) override {
    return std::nullopt;
  }
  void on_closed(ConnectionId, const std::string&) override {}
  protocol::AttemptGrant attempt_grant(core::TrialId trial) const override {
    return {trial == 5 ? 1U : 0U, ""};
  }
};
}  // namespace

// Past the cap, a running trial's rank 0 is still admitted (a reserve of a quarter more):
// ranks that only ask and leftover processes cannot keep a trial from reporting.
BOOST_AUTO_TEST_CASE(a_running_trials_reporter_uses_the_reserve) {
  EventLoop loop;
  RunningTrialHandler handler;
  const std::string secret = protocol::generate_token();
  ControlServer server(loop, handler, secret, ControlServerOptions{"127.0.0.1", 0, 5, 128, 4});
  const auto hello_of = [&](core::TrialId trial, std::int64_t rank) {
    return protocol::encode_frame(
        protocol::MessageType::Hello,
        R"({"token": ")" +
            protocol::attempt_credential(secret, trial, 0, handler.attempt_grant(trial).launch) +
            R"(", "trial": )" + std::to_string(trial) + R"(, "attempt": 0, "rank": )" +
            std::to_string(rank) + "}");
  };
  std::vector<protocol::UniqueFd> fds;
  const auto say = [&](const std::string& hello) {
    protocol::UniqueFd fd = connect_to(server.port());
    exchange_on(loop, fd.get(), hello);
    fds.push_back(std::move(fd));
  };
  for (int i = 0; i < 4; ++i)
    say(hello_of(6, 1));  // not running: no reserve
  say(hello_of(6, 1));
  BOOST_TEST(handler.hellos == 4);
  BOOST_TEST(server.stats().over_capacity == 1u);
  say(hello_of(5, 0));  // the running trial's reporter
  BOOST_TEST(handler.hellos == 5);
  say(hello_of(5, 1));  // one of its ranks that only ask
  BOOST_TEST(handler.hellos == 5);
  BOOST_TEST(server.stats().over_capacity == 2u);
}

namespace {
// Lowers this process's descriptor limit for one test and restores it.
class DescriptorLimit {
 public:
  explicit DescriptorLimit(rlim_t soft) {
    BOOST_REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved_) == 0);
    rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    BOOST_REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  }
  ~DescriptorLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  rlimit saved_{};
};

// A descriptor limit that leaves `free` descriptors to open (new ones take the lowest
// free numbers, and the environment may hold high ones).
rlim_t limit_leaving(int free) {
  std::set<int> open;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    open.insert(std::stoi(entry.path().filename().string()));
  int limit = 0;
  for (int left = free; left > 0; ++limit)
    if (!open.contains(limit)) --left;
  return static_cast<rlim_t>(limit);
}
}  // namespace

// Idle connections stay for the whole test (no hello timeout frees their descriptors).
struct PatientFixture : Fixture {
  PatientFixture() : Fixture(128, 60) {}
  // A new client socket connected to the server (no HELLO yet), or none when this
  // process has no descriptor left for it.
  protocol::UniqueFd dial() {
    protocol::UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
    if (!fd) return fd;
    connect_loopback(fd.get(), server.port());
    return fd;
  }
};

// When accept() fails for want of descriptors and every connection is authenticated,
// the listener stays ready (level-triggered epoll): the server must stop watching it
// rather than spin, and accept the waiting peer once a descriptor is free.
BOOST_FIXTURE_TEST_CASE(descriptor_exhaustion_pauses_accepting_without_spinning, PatientFixture) {
  std::vector<protocol::UniqueFd> clients;
  {
    const DescriptorLimit limit(limit_leaving(16));
    // Each client costs two descriptors here (its socket and the accepted one).
    while (server.stats().accept_failures == 0 && clients.size() < 64) {
      protocol::UniqueFd fd = dial();
      BOOST_REQUIRE(fd);
      const std::string bytes = hello();
      ::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
      clients.push_back(std::move(fd));
      for (int i = 0; i < 3; ++i)
        loop.run_once(20);
    }
    BOOST_REQUIRE(server.stats().accept_failures >= 1u);
    BOOST_TEST(server.stats().accept_pauses == 1u);
    BOOST_TEST(server.stats().evicted == 0u);  // every connection said HELLO
    // One second of the coordinator's loop: a spinning listener would run its callback
    // thousands of times; a paused one is tried again twice a second.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    int callbacks = 0;
    while (std::chrono::steady_clock::now() < until) {
      callbacks += loop.run_once(100);
      server.tick();
    }
    BOOST_TEST(callbacks <= 10);
    BOOST_TEST(server.stats().accept_failures <= 5u);
  }
  // Two clients leave: their descriptors free, and the waiting peer is welcomed.
  clients.erase(clients.begin(), clients.begin() + 2);
  const auto [frames, closed] = exchange(clients.back().get(), "");
  BOOST_TEST(!closed);
  BOOST_REQUIRE(frames.size() == 1u);
  BOOST_TEST((frames[0].type == protocol::MessageType::Welcome));
}

// Out of descriptors with idle peers connected: the oldest idle one makes room.
BOOST_FIXTURE_TEST_CASE(idle_peers_make_room_when_descriptors_run_out, PatientFixture) {
  std::vector<protocol::UniqueFd> idle;
  const DescriptorLimit limit(limit_leaving(16));
  while (server.stats().evicted == 0 && idle.size() < 64) {
    protocol::UniqueFd fd = dial();
    if (!fd) {  // this process's own end ran out first: one idle peer leaves
      idle.erase(idle.begin() + static_cast<std::ptrdiff_t>(idle.size() / 2));
      pump();
      continue;
    }
    idle.push_back(std::move(fd));
    pump(2);
  }
  BOOST_TEST(server.stats().evicted >= 1u);
  BOOST_TEST(server.stats().accept_pauses == 0u);
  BOOST_TEST(exchange(idle.front().get(), "").second);  // the oldest was closed
  const auto [frames, closed] = exchange(idle.back().get(), hello());
  BOOST_TEST(!closed);
  BOOST_TEST((frames.at(0).type == protocol::MessageType::Welcome));
}

BOOST_AUTO_TEST_CASE(a_throttled_log_keeps_a_burst_per_interval_and_counts_the_rest) {
  ThrottledLog log("test", 3, std::chrono::seconds(10));
  const auto start = ThrottledLog::Clock::now();
  int written = 0;
  for (int i = 0; i < 1000; ++i)
    written += log.line("refused", start + std::chrono::milliseconds(i)) ? 1 : 0;
  BOOST_TEST(written == 3);
  BOOST_TEST(log.left_out() == 997u);
  BOOST_TEST(log.line("refused", start + std::chrono::seconds(11)));
}

BOOST_FIXTURE_TEST_CASE(refusals_of_valid_credentials_are_logged_throttled, Fixture) {
  // A leftover process in a reconnect loop: a valid credential, a HELLO the study refuses
  // (trial 9 is not running). 40 tries make at most 10 lines in 10 s, not 40.
  for (int i = 0; i < 40; ++i) {
    const auto fd = connect();
    const auto [frames, closed] = exchange(fd.get(), hello(9));
    BOOST_REQUIRE(!frames.empty());
    BOOST_TEST(error_text(frames.back()) == "trial 9 is not running");
    BOOST_TEST(closed);
  }
  BOOST_TEST(server.stats().peer_lines_left_out >= 30u);
  BOOST_TEST(handler.hellos == 0);
}
