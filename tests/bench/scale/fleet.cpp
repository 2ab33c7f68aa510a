// The fleet harness (issue #61, item 4): one process that plays many nodes of a
// worker-launch study, so that 2,048 nodes and 16,384 trials cost sockets, not processes,
// and the figures measure slurmtune rather than the scheduler of a small machine.
//
//   fleet --nodes HOSTLIST --part K --parts P --interval S [--jitter J] --out FILE
//   (env, as the worker step's: SLURMTUNE_ADDR, SLURMTUNE_WORKER_CREDENTIALS)
//
// For each node of its part (the nodes whose index is K modulo P) it runs what a real
// worker runs against the real coordinator: the two-way authentication with the node's
// credential, and the real node agent (runtime/worker/node_agent.hpp) on a unix socket.
// What the worker would start as a child on LAUNCH is played in-process instead: a
// trial endpoint that connects to its node's agent like the report clients, says HELLO
// with its launch's credential (derived from the node's, as the worker does), reports
// every S seconds, each step S x U(1-J, 1+J) long (steps: the trial command's last
// argument, the first at a random point of the first interval; its loss x + 1/step, x
// its configuration's) and measures each report's round trip to its DECISION, then says BYE. A
// decision that asks for a checkpoint gets a CHECKPOINT first, and a resumed launch reports from
// the step after SLURMTUNE_CHECKPOINT_STEP, as the report clients do; the worker then says EXITED.
// SIGNAL ends the endpoint as a kill would. At the end (LAUNCH {"done"} to every node) FILE gets
// one JSON line of this part's figures: round trips (p50, p99, max; and the same in the steady
// state, from 10 s after the last start to 2 s before the first end; the p99 of decisions that
// asked for a checkpoint and of the rest; per 10 s window, reports sent, those over 20 ms, and
// those whose coordinator's part or whose wait in the fleet alone was over 20 ms), the part of
// each round trip outside the fleet (from the report's leaving its node to the decision's being
// read there, split at its arrival in the node's socket), the fleet's own lag (how late its
// timers ran), reports sent and answered, trials ended, refused.
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/number_text.hpp"
#include "core/placement/hostlist.hpp"
#include "fleet_figures.hpp"
#include "protocol/credentials.hpp"
#include "protocol/route_messages.hpp"
#include "protocol/session_messages.hpp"
#include "protocol/trial_messages.hpp"
#include "protocol/wire/json_value.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/wire/secret.hpp"
#include "protocol/wire/tcp_connect.hpp"
#include "protocol/worker_messages.hpp"
#include "runtime/control/credential_files.hpp"
#include "runtime/control/event_loop.hpp"
#include "runtime/worker/node_agent.hpp"
#include "runtime/worker/relay_tree.hpp"
#include "runtime/worker/worker_session.hpp"

using namespace slurmtune;
using fleet::Clock;
using fleet::Figures;

namespace {

struct Options {
  std::vector<std::string> nodes;
  std::size_t part = 0, parts = 1;
  double interval_s = 1;
  double jitter = 0;  // each step lasts interval_s x U(1 - jitter, 1 + jitter)
  std::string out;
};

// Timers: (when, what), the earliest first.
class Timers {
 public:
  void at(Clock::time_point when, std::function<void()> what) {
    queue_.push(Entry{when, next_++, std::move(what)});
  }
  // Rounded up: with 16,384 trials' timers a second the next is nearly always less than
  // a millisecond away, and a wait rounded down to 0 spun the process on its core.
  int wait_ms() const {
    if (queue_.empty()) return 1000;
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(queue_.top().when - Clock::now());
    return static_cast<int>(std::clamp<long>(left.count(), 0, 1000));
  }
  // `late_ms`: how late each due timer ran, the harness's own lag (a report sent late
  // does not count against the round trip, which starts at the send; a decision read
  // late does, and the same turns delay both).
  void run_due(std::vector<float>& late_ms) {
    const auto now = Clock::now();
    while (!queue_.empty() && queue_.top().when <= now) {
      auto what = queue_.top().what;
      late_ms.push_back(static_cast<float>(
          std::chrono::duration<double, std::milli>(now - queue_.top().when).count()));
      queue_.pop();
      what();
    }
  }

 private:
  struct Entry {
    Clock::time_point when;
    std::uint64_t order;
    std::function<void()> what;
    bool operator>(const Entry& other) const {
      return when != other.when ? when > other.when : order > other.order;
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue_;
  std::uint64_t next_ = 0;
};

void send_all(int fd, std::string_view bytes) {
  for (std::size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) continue;  // a unix socket to our own agent: it drains soon
    if (n <= 0) throw Error(std::string("send: ") + std::strerror(errno));
    sent += static_cast<std::size_t>(n);
  }
}

class Node;

// x of the trial's SLURMTUNE_PARAMS ({"x": 0.28...}, the fleet's study's one parameter).
double param_x(const std::string& params) {
  const auto value = protocol::parse_json(params);
  return std::get<double>(std::get<protocol::JsonObject>(value.data).at("x").data);
}

// One trial's endpoint, as a report client on the node would be.
class Trial {
 public:
  // `from_step`: the step of the checkpoint a resumed launch starts from (0: none).
  Trial(Node& node, protocol::ProcessKey key, int steps, int from_step, std::string checkpoints,
        double x)
      : node_(node),
        key_(key),
        steps_(steps),
        step_(from_step),
        checkpoints_(std::move(checkpoints)),
        x_(x) {}
  void start(const std::string& agent, const std::string& token, runtime::EventLoop& loop);
  void on_readable();
  void report();
  void end(bool killed);
  bool over() const { return over_; }

 private:
  Node& node_;
  protocol::ProcessKey key_;
  int steps_, step_ = 0;
  std::string checkpoints_;  // SLURMTUNE_CHECKPOINT_DIR
  double x_ = 0;             // its configuration's x: trials differ, as a study's do
  protocol::UniqueFd fd_;
  protocol::FrameDecoder decoder_;
  Clock::time_point sent_, welcomed_;
  runtime::EventLoop* loop_ = nullptr;
  bool over_ = false;
};

class Node {
 public:
  Node(std::string name, runtime::EventLoop& loop, Timers& timers, Figures& figures,
       double interval_s, double jitter)
      : name_(std::move(name)),
        loop_(loop),
        timers_(timers),
        figures_(figures),
        interval_s_(interval_s),
        jitter_(jitter) {}

  // The worker's own connect and two-way authentication (runtime/worker/worker_session.hpp),
  // to the coordinator or to its group's relay; a relay then carries the other agents of
  // its group (runtime/worker/relay_tree.hpp), as a real worker does.
  // `tmp`: the node's own /tmp, where its agent makes its socket's folder (and looks
  // for dead agents' folders among the few there, as on a real node).
  void connect(const std::string& address, const std::string& token,
               const runtime::RelayPlace& place, const std::string& tmp) {
    runtime::Session session =
        runtime::open_session(address, token, protocol::WorkerHello{name_, ""});
    fd_ = std::move(session.fd);
    const int one = 1;
    ::setsockopt(fd_.get(), SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    decoder_ = std::move(session.decoder);
    credential_ = std::move(session.credential);
    agent_ = std::make_unique<runtime::NodeAgent>(
        loop_, [this](const std::string& frame) { up(frame); },
        [this](core::TrialId trial) {
          const auto it = trials_.lower_bound(protocol::ProcessKey{trial, 0});
          return it != trials_.end() && it->first.trial == trial;
        },
        tmp);
    if (place.relays()) {
      std::string relay;
      agent_->carry_agents(runtime::listen_for_agents(fd_.get(), relay));
      runtime::publish_relay_address(place, relay);
    }
    loop_.add(fd_.get(), EPOLLIN, [this](std::uint32_t) { on_readable(); });
    drain();
  }

  void up(const std::string& frame) {
    if (const auto channel = routed_channel(frame, protocol::MessageType::Report))
      leaving_.push_back(*channel);
    upward_ += frame;
    if (!dirty_) dirty_nodes_.push_back(this);
    dirty_ = true;
  }
  void flush() {
    dirty_ = false;
    if (!fd_) return;
    send_all(fd_.get(), upward_);
    upward_.clear();
    const auto now = Clock::now();
    const auto wall = std::chrono::system_clock::now();
    for (const std::uint64_t channel : leaving_)
      left_at_[channel] = {now, wall};
    leaving_.clear();
  }
  // The nodes with frames to send upward, each once: a turn sends for those alone (a
  // pass over all 512 of a part's nodes each turn was a fifth of the fleet's CPU time).
  static std::vector<Node*>& dirty_nodes() { return dirty_nodes_; }
  static std::size_t nodes_done() { return nodes_done_; }
  void tick() {
    if (agent_) agent_->tick();
  }
  Timers& timers() { return timers_; }
  Figures& figures() { return figures_; }
  double interval_s() const { return interval_s_; }
  // One step's length: a real trial's steps vary (data loading, other jobs on the
  // network), and steps of exactly the same length would keep trials that a burst
  // answered together in lock-step for ever.
  double step_s() {
    static std::minstd_rand lengths(7);
    return interval_s_ * std::uniform_real_distribution<double>(1 - jitter_, 1 + jitter_)(lengths);
  }

  // The trial's process "exited": EXITED once its last frames went up through the agent.
  void exited(const protocol::ProcessKey& key, bool killed) {
    timers_.at(Clock::now() + std::chrono::milliseconds(5), [this, key, killed] {
      up(protocol::encode_frame(
          protocol::MessageType::Exited,
          protocol::encode(protocol::Exited{key, 0, killed ? 9 : 0, killed, {}})));
    });  // the endpoint stays (ended): a timer of it may still be due
  }

 private:
  void on_readable() {
    char buffer[65536];
    iovec data{buffer, sizeof buffer};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd_.get(), &message, 0);
    arrived_.reset();
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); n > 0 && c; c = CMSG_NXTHDR(&message, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
        timespec at{};
        std::memcpy(&at, CMSG_DATA(c), sizeof at);
        arrived_ = std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                std::chrono::seconds(at.tv_sec) + std::chrono::nanoseconds(at.tv_nsec)));
      }
    if (n <= 0) {
      finish();
      loop_.remove(fd_.get());
      return;
    }
    decoder_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    drain();
  }

  void drain() {
    while (auto frame = decoder_.next()) {
      if (frame->type == protocol::MessageType::Routed) {
        const protocol::Routed routed = protocol::decode_routed(*frame);
        if (routed.frame.type == protocol::MessageType::Decision)
          if (const auto left = left_at_.find(routed.channel); left != left_at_.end()) {
            figures_.outside_ms.push_back(static_cast<float>(
                std::chrono::duration<double, std::milli>(Clock::now() - left->second.first)
                    .count()));
            if (arrived_) {
              const double to_socket =
                  std::chrono::duration<double, std::milli>(*arrived_ - left->second.second)
                      .count();
              figures_.to_socket_ms.push_back(static_cast<float>(to_socket));
              figures_.socket_sent_at.push_back(left->second.first);
              figures_.in_socket_ms.push_back(
                  static_cast<float>(std::chrono::duration<double, std::milli>(
                                         std::chrono::system_clock::now() - *arrived_)
                                         .count()));
            }
            left_at_.erase(left);
          }
      }
      if (frame->type == protocol::MessageType::Routed ||
          frame->type == protocol::MessageType::ChannelClosed) {
        agent_->from_coordinator(*frame);
        continue;
      }
      const auto body = protocol::payload_object(*frame);
      if (frame->type == protocol::MessageType::Launch) {
        const auto message = protocol::decode_launch(body);
        if (std::holds_alternative<protocol::StudyOver>(message)) {
          finish();
          continue;
        }
        const auto& launch = std::get<protocol::Launch>(message);
        const int steps = std::stoi(launch.argv.back());
        const std::string& from = launch.env.at("SLURMTUNE_CHECKPOINT_STEP");
        auto& trial = trials_[launch.key] = std::make_unique<Trial>(
            *this, launch.key, steps, from.empty() ? 0 : std::stoi(from),
            launch.env.at("SLURMTUNE_CHECKPOINT_DIR"), param_x(launch.env.at("SLURMTUNE_PARAMS")));
        // The worker's derivation of the attempt's credential (runtime/worker/worker.cpp);
        // the endpoint is in this process, so it takes the text, not a file.
        trial->start(agent_->address(),
                     protocol::attempt_credential(credential_, launch.key.trial, launch.key.attempt,
                                                  launch.launch),
                     loop_);
      } else if (frame->type == protocol::MessageType::Signal) {
        const auto signal = protocol::decode_signal(body);
        if (const auto it = trials_.find(signal.key); it != trials_.end() && !it->second->over())
          it->second->end(true);
      }
    }
  }

  void finish() {
    if (!done_) ++nodes_done_;
    done_ = true;
  }

  // The channel a ROUTED frame (whole, header included) carries `inner` on; nullopt for
  // any other frame.
  static std::optional<std::uint64_t> routed_channel(const std::string& frame,
                                                     protocol::MessageType inner) {
    protocol::FrameDecoder decoder;
    decoder.feed(frame);
    const auto decoded = decoder.next();
    if (!decoded || decoded->type != protocol::MessageType::Routed) return std::nullopt;
    const protocol::Routed routed = protocol::decode_routed(*decoded);
    if (routed.frame.type != inner) return std::nullopt;
    return routed.channel;
  }

  std::string name_;
  std::string credential_;  // this node's worker credential: its attempts' derive from it
  runtime::EventLoop& loop_;
  Timers& timers_;
  Figures& figures_;
  double interval_s_, jitter_;
  protocol::UniqueFd fd_;
  protocol::FrameDecoder decoder_;
  std::unique_ptr<runtime::NodeAgent> agent_;
  std::map<protocol::ProcessKey, std::unique_ptr<Trial>> trials_;
  std::string upward_;
  std::vector<std::uint64_t> leaving_;  // channels whose REPORT the next flush sends
  // By channel: when its REPORT left, on both clocks (the kernel stamps arrivals with
  // the real-time one).
  std::unordered_map<std::uint64_t,
                     std::pair<Clock::time_point, std::chrono::system_clock::time_point>>
      left_at_;
  std::optional<std::chrono::system_clock::time_point> arrived_;  // the last read's stamp
  bool dirty_ = false, done_ = false;
  static inline std::vector<Node*> dirty_nodes_;
  static inline std::size_t nodes_done_ = 0;
};

void Trial::start(const std::string& agent, const std::string& token, runtime::EventLoop& loop) {
  loop_ = &loop;
  fd_ = protocol::connect_address(agent);
  ::fcntl(fd_.get(), F_SETFL, O_NONBLOCK);
  protocol::Hello hello;
  hello.token = token;
  hello.from = protocol::TrialHello{key_.trial, key_.attempt, 0, ""};
  loop.add(fd_.get(), EPOLLIN, [this](std::uint32_t) { on_readable(); });
  send_all(fd_.get(),
           protocol::encode_frame(protocol::MessageType::Hello, protocol::encode(hello)));
}

void Trial::on_readable() {
  char buffer[4096];
  const ssize_t n = ::recv(fd_.get(), buffer, sizeof buffer, 0);
  if (n < 0 && errno == EAGAIN) return;
  if (n <= 0) return end(true);
  decoder_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  while (auto frame = decoder_.next()) {
    const auto now = Clock::now();
    if (frame->type == protocol::MessageType::Welcome) {
      welcomed_ = now;
      node_.figures().last_welcome = std::max(node_.figures().last_welcome, now);
      // The first report at a random point of the interval: trials of a real study do not
      // report in lock-step (they start, and their steps last, at different times).
      static std::minstd_rand phases(42);
      const double phase = std::uniform_real_distribution<double>(0, 1)(phases);
      node_.timers().at(now + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(node_.interval_s() * phase)),
                        [this] { report(); });
    } else if (frame->type == protocol::MessageType::Decision) {
      auto& figures = node_.figures();
      ++figures.decisions;
      figures.waited_s += std::chrono::duration<double>(now - sent_).count();
      figures.round_trips_ms.push_back(
          static_cast<float>(std::chrono::duration<double, std::milli>(now - sent_).count()));
      figures.sent_at.push_back(sent_);
      const auto decision = protocol::decode_decision(protocol::payload_object(*frame));
      figures.asked_checkpoint.push_back(decision.checkpoint);
      // As the clients do: a decision that asks for a checkpoint has one named before
      // the trial goes on or leaves (the file itself is not written: the coordinator
      // takes a name that does not exist yet), and a resumed launch starts after its step.
      if (decision.checkpoint)
        send_all(fd_.get(),
                 protocol::encode_frame(
                     protocol::MessageType::Checkpoint,
                     protocol::encode(protocol::CheckpointSaved{
                         static_cast<double>(step_),
                         checkpoints_ + "/step-" + std::to_string(step_) + ".ckpt", 1})));
      if (decision.decision != "continue" || step_ >= steps_) return end(false);
      node_.timers().at(now + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(node_.step_s())),
                        [this] { report(); });
    } else {  // ERROR, BUSY: refused
      ++node_.figures().refused;
      return end(true);
    }
  }
}

void Trial::report() {
  if (over_) return;
  ++step_;
  sent_ = Clock::now();
  ++node_.figures().reports;
  send_all(fd_.get(), protocol::encode_frame(protocol::MessageType::Report,
                                             "{\"step\": " + std::to_string(step_) +
                                                 ", \"metrics\": {\"loss\": " +
                                                 core::format_double(x_ + 1.0 / step_) + "}}"));
}

void Trial::end(bool killed) {
  if (over_) return;
  over_ = true;
  node_.figures().first_end = std::min(node_.figures().first_end, Clock::now());
  node_.figures().lived_s += std::chrono::duration<double>(Clock::now() - welcomed_).count();
  if (!killed)
    send_all(fd_.get(), protocol::encode_frame(protocol::MessageType::Bye,
                                               protocol::encode(protocol::TrialEnding{true, ""})));
  loop_->remove(fd_.get());
  fd_.reset();
  ++node_.figures().trials;
  if (killed) ++node_.figures().killed;
  node_.exited(key_, killed);
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--nodes")
      options.nodes = core::expand_hostlist(value);
    else if (flag == "--part")
      options.part = std::stoul(value);
    else if (flag == "--parts")
      options.parts = std::stoul(value);
    else if (flag == "--interval")
      options.interval_s = std::stod(value);
    else if (flag == "--jitter")
      options.jitter = std::stod(value);
    else if (flag == "--out")
      options.out = value;
    else
      throw Error("fleet: unknown option " + flag);
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse(argc, argv);
    const char* address = std::getenv("SLURMTUNE_ADDR");
    const char* credentials = std::getenv("SLURMTUNE_WORKER_CREDENTIALS");
    if (!address || !credentials)
      throw Error("fleet: SLURMTUNE_ADDR and SLURMTUNE_WORKER_CREDENTIALS");
    runtime::EventLoop loop;
    Timers timers;
    Figures figures;
    // With relays (the step's SLURMTUNE_RELAYS and SLURMTUNE_RELAY_FANOUT), part 0 plays
    // every relay and the other parts the agents behind them: an agent's connect waits
    // on its relay's loop, which must not be its own.
    runtime::RelayPlace tier;
    if (const char* folder = std::getenv("SLURMTUNE_RELAYS")) {
      tier.folder = folder;
      tier.fanout = std::stoul(std::getenv("SLURMTUNE_RELAY_FANOUT"));
      if (tier.fanout > 1 && options.parts < 2) throw Error("fleet: relays need --parts 2 or more");
    }
    const auto plays = [&](std::size_t i) {
      if (tier.fanout < 2) return i % options.parts == options.part;
      if (i % tier.fanout == 0) return options.part == 0;
      return options.part != 0 && i % (options.parts - 1) + 1 == options.part;
    };
    // Each node its own /tmp: one shared by 2,048 emulated nodes would have every agent
    // list 2,048 folders of the others when it starts.
    const std::filesystem::path node_tmp =
        std::filesystem::absolute(options.out).parent_path() / "node-tmp";
    std::vector<std::unique_ptr<Node>> nodes;
    for (std::size_t i = 0; i < options.nodes.size(); ++i) {
      if (!plays(i)) continue;
      runtime::RelayPlace place = tier;
      place.index = i;
      std::string upward = address;
      if (place.relayed()) {
        const auto until = Clock::now() + runtime::kRelayWait;
        std::optional<std::string> relay;
        while (!(relay = runtime::published_relay_address(place)) && Clock::now() < until)
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!relay) throw Error("fleet: no relay published " + place.address_file());
        upward = *relay;
      }
      auto node = std::make_unique<Node>(options.nodes[i], loop, timers, figures,
                                         options.interval_s, options.jitter);
      const std::filesystem::path tmp = node_tmp / options.nodes[i];
      std::filesystem::create_directories(tmp);
      node->connect(
          upward,
          protocol::read_token_file(runtime::worker_credential_file(credentials, options.nodes[i])),
          place, tmp.string());
      nodes.push_back(std::move(node));
    }
    auto last_tick = Clock::now();
    std::vector<Node*> flushing;  // this turn's dirty nodes (both vectors keep their room)
    while (Node::nodes_done() < nodes.size()) {
      loop.run_once(timers.wait_ms());
      timers.run_due(figures.timers_late_ms);
      flushing.swap(Node::dirty_nodes());
      for (Node* node : flushing)
        node->flush();
      flushing.clear();
      if (Clock::now() - last_tick > std::chrono::seconds(1)) {
        last_tick = Clock::now();
        for (auto& node : nodes)
          node->tick();
      }
    }
    fleet::write_figures(figures, nodes.size(), options.out);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "fleet: " << e.what() << "\n";
    return 1;
  }
}
