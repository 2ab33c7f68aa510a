#include "slurmtune/client.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
#include <thread>

#include "client/typed_param.hpp"
#include "core/number_text.hpp"
#include "protocol/agent_address.hpp"
#include "protocol/auth_messages.hpp"
#include "protocol/route_messages.hpp"
#include "protocol/session_messages.hpp"
#include "protocol/trial_messages.hpp"
#include "protocol/wire/json_value.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/wire/secret.hpp"
#include "protocol/wire/tcp_connect.hpp"
#include "protocol/wire/unique_fd.hpp"

namespace slurmtune {
namespace {

// HELLO's tries when the connection is refused or lost before any reply, with pauses of
// 0.1, 0.2, ..., 3.2 s between them: 6.3 s in all, the bound on how long a trial waits
// for a coordinator that is gone.
constexpr int kHelloAttempts = 7;
constexpr std::chrono::milliseconds kFirstHelloPause{100};
// BUSY (no room at the coordinator now) is not a try: the client waits what the reply
// says, plus up to half of it again so a herd spreads out, for at most this long in all.
constexpr double kBusyBudgetS = 900;

// The coordinator's BUSY: thrown by receive(), caught by hello().
struct NoRoom {
  protocol::Busy busy;
};

protocol::Busy busy_of(const protocol::JsonObject& body) {
  try {
    return protocol::decode_busy(body);
  } catch (const protocol::ProtocolError& e) {
    throw ClientError(std::string("the coordinator sent a malformed BUSY: ") + e.what());
  }
}

std::string env_or(const char* name, const std::string& fallback = {}) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

std::string required_env(const char* name) {
  std::string value = env_or(name);
  if (value.empty())
    throw ClientError(std::string(name) +
                      " is not set: this program must be started by 'slurmtune run'");
  return value;
}

// A whole number from the environment (SLURMTUNE_TRIAL_ID, SLURMTUNE_ATTEMPT).
template <typename Number>
Number whole_env(const char* name, const char* what) {
  const std::string text = required_env(name);
  Number value{};
  if (const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      error != std::errc() || end != text.data() + text.size())
    throw ClientError(std::string(name) + " is '" + text + "', not " + what);
  return value;
}

int detect_rank() {
  for (const char* name :
       {"SLURMTUNE_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const std::string v = env_or(name); !v.empty()) return std::atoi(v.c_str());
  return 0;
}

protocol::UniqueFd connect_to(const std::string& address) {
  try {
    return protocol::connect_address(address);
  } catch (const protocol::ConnectError& e) {
    if (e.kind() == protocol::ConnectError::Kind::Refused) throw CoordinatorLost(e.what());
    throw ClientError(std::string("SLURMTUNE_ADDR: ") + e.what());
  }
}

// The node this process runs on, as Slurm names it (SLURMD_NODENAME in every task of a
// step), else its host name.
std::string node_name() {
  if (std::string node = env_or("SLURMD_NODENAME"); !node.empty()) return node;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return {};
  std::string name = host;
  return name.substr(0, name.find('.'));
}

// Connects to the coordinator: through this node's agent when the study's agents publish
// their addresses (SLURMTUNE_AGENTS, set for the ranks of a trial started as its own
// step on worker launch) and this node's has, else to SLURMTUNE_ADDR. An agent that does
// not answer is gone with its node's worker step: the coordinator itself is asked then.
protocol::UniqueFd connect_to_coordinator() {
  const std::string direct = required_env("SLURMTUNE_ADDR");
  const std::string agents = env_or("SLURMTUNE_AGENTS");
  const auto agent =
      agents.empty() ? std::nullopt : protocol::published_agent_address(agents, node_name());
  if (agent) {
    try {
      return protocol::connect_address(*agent);
    } catch (const protocol::ConnectError&) {
    }
  }
  return connect_to(direct);
}

// The payload of BYE and TRIAL_END: how a trial ended.
std::string ending(bool ok, const std::string& error) {
  return protocol::encode(protocol::TrialEnding{ok, error});
}

Decision decision_of(const protocol::DecisionReply& reply) {
  if (reply.decision == "continue") return Decision::Continue;
  if (reply.decision == "stop") return Decision::Stop;
  return Decision::Pause;  // decode_decision admits nothing else
}

// SIGTERM (scancel, preemption, the orchestrator's stop escalation) ends a trial's
// process at once by default, losing the work since its last checkpoint. While a
// client exists the first SIGTERM is only noted: the next report answers "pause, with a
// checkpoint" and the attempt ends as interrupted. A second SIGTERM, or one after the
// trial was told to end, terminates as before. Installed only over the default action.
volatile std::sig_atomic_t sigterm_seen = 0;
volatile std::sig_atomic_t trial_ending = 0;

extern "C" void on_sigterm(int signal) {
  if (sigterm_seen || trial_ending) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  sigterm_seen = 1;
}

void catch_sigterm_once() {
  struct sigaction current {};
  if (::sigaction(SIGTERM, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction action {};
  action.sa_handler = on_sigterm;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGTERM, &action, nullptr);
}

}  // namespace

struct Client::State {
  protocol::UniqueFd fd;
  protocol::FrameDecoder decoder;
  std::uint64_t trial = 0, attempt = 0;
  int rank = 0;
  std::string trial_dir, checkpoint_dir, checkpoint;
  std::optional<double> checkpoint_step;
  protocol::JsonObject params;
  std::string assignment;  // WELCOME or ASSIGN payload of the current trial
  bool checkpoint_wanted = false, finished = false, group = false;
  std::optional<double> terminated_at;  // the step whose report noticed a SIGTERM
  bool stopped = false;  // told to stop or pause (its checkpoint perhaps still to save)

  void send(protocol::MessageType type, const std::string& payload) {
    const std::string frame = protocol::encode_frame(type, payload);
    std::size_t sent = 0;
    while (sent < frame.size()) {
      const ssize_t n = ::send(fd.get(), frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw CoordinatorLost(std::string("lost the coordinator: ") + std::strerror(errno));
      sent += static_cast<std::size_t>(n);
    }
  }

  protocol::JsonObject receive(protocol::MessageType expected) {
    char buffer[65536];
    for (;;) {
      if (auto frame = decoder.next()) {
        auto body = protocol::payload_object(*frame);
        if (frame->type == protocol::MessageType::Error)
          throw ClientError("the coordinator refused: " + protocol::decode_error(body).error);
        if (frame->type == protocol::MessageType::Busy) throw NoRoom{busy_of(body)};
        if (frame->type != expected)
          throw ClientError("expected " + std::string(protocol::to_string(expected)) + ", got " +
                            std::string(protocol::to_string(frame->type)));
        return body;
      }
      const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw CoordinatorLost("lost the coordinator (connection closed)");
      decoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    }
  }

  // Connects, says HELLO and returns the coordinator's WELCOME. A connection refused or
  // closed before any reply is tried again, kHelloAttempts times in all with a doubling
  // pause: a coordinator flooded with connections that never authenticate closes the
  // oldest waiting ones, which may be this one (doc/protocol.md#limits). An ERROR reply
  // is final; BUSY says when to come back, and is obeyed within kBusyBudgetS.
  protocol::JsonObject hello(const protocol::HelloFrom& identity) {
    auto pause = kFirstHelloPause;
    double busy_waited_s = 0;
    std::minstd_rand jitter(static_cast<std::uint32_t>(::getpid()));
    for (int tries = 1;; ++tries) {
      std::chrono::duration<double> wait = pause;
      try {
        connect_and_hello(identity);
        return receive(protocol::MessageType::Welcome);
      } catch (const CoordinatorLost&) {
        if (tries == kHelloAttempts) throw;
        pause *= 2;
      } catch (const NoRoom& no_room) {
        --tries;
        wait = std::chrono::duration<double>(
            no_room.busy.retry_after_s *
            (1 + std::uniform_real_distribution<double>(0, 0.5)(jitter)));
        if (busy_waited_s + wait.count() > kBusyBudgetS)
          throw CoordinatorLost("the coordinator had no room for " +
                                core::format_double(busy_waited_s) + " s: " + no_room.busy.why);
        busy_waited_s += wait.count();
        std::cerr << "slurmtune: the coordinator has no room now (" << no_room.busy.why
                  << "); connecting again in "
                  << core::format_double(std::round(wait.count() * 10) / 10) << " s\n";
      }
      fd = protocol::UniqueFd();
      decoder = protocol::FrameDecoder();
      std::this_thread::sleep_for(wait);
    }
  }

  void connect_and_hello(protocol::HelloFrom identity) {
    protocol::Hello hello;
    hello.token = protocol::read_token_file(required_env("SLURMTUNE_TOKEN_FILE"));
    fd = connect_to_coordinator();
    const std::string job = env_or("SLURM_JOB_ID"), step = env_or("SLURM_STEP_ID");
    if (auto* trial_hello = std::get_if<protocol::TrialHello>(&identity);
        trial_hello && !job.empty() && !step.empty())
      trial_hello->slurm_step = job + "." + step;
    hello.from = std::move(identity);
    send(protocol::MessageType::Hello, protocol::encode(hello));
  }

  // Installs a trial's description (WELCOME of a trial, ASSIGN of a group).
  void adopt(const protocol::TrialAssignment& given) {
    trial = given.trial;
    attempt = given.attempt;
    trial_dir = given.trial_dir;
    checkpoint_dir = given.checkpoint_folder();
    checkpoint = given.checkpoint;
    checkpoint_step = given.checkpoint_step;
    params = given.params_object();
    checkpoint_wanted = false;
    assignment = protocol::encode(given);
  }

  Decision exchange(protocol::MessageType type, const std::string& payload, double step) {
    send(type, payload);
    protocol::DecisionReply reply;
    try {
      reply = protocol::decode_decision(receive(protocol::MessageType::Decision));
    } catch (const protocol::ProtocolError& e) {
      throw ClientError(std::string("the coordinator sent a malformed DECISION: ") + e.what());
    }
    checkpoint_wanted = reply.checkpoint;
    Decision decision = decision_of(reply);
    if (decision == Decision::Continue && sigterm_seen && !group) {
      terminated_at = step;
      checkpoint_wanted = true;
      decision = Decision::Pause;
    }
    // Told to stop or pause, a SIGTERM ends the process at once (a trial that hangs),
    // but not before the checkpoint asked for is saved: scancel signals the trial's step
    // as the coordinator's "suspend" reaches it (checkpoint_saved ends it then).
    if (decision != Decision::Continue) {
      stopped = true;
      if (!checkpoint_wanted) trial_ending = 1;
    }
    return decision;
  }
};

Client::Client(std::unique_ptr<State> state) : state_(std::move(state)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

Client::~Client() {
  if (!state_ || state_->finished || state_->group) return;
  try {
    finish(true);
  } catch (const std::exception&) {
    // The coordinator is gone; nothing left to tell it.
  }
}

Client Client::from_environment() {
  auto state = std::make_unique<State>();
  required_env("SLURMTUNE_ADDR");  // the first thing a misplaced call lacks: say that
  protocol::TrialHello hello;
  hello.trial = whole_env<core::TrialId>("SLURMTUNE_TRIAL_ID", "a trial id");
  // Its credential covers this attempt only (doc/protocol.md#credentials).
  hello.attempt = whole_env<std::uint64_t>("SLURMTUNE_ATTEMPT", "an attempt number");
  state->rank = detect_rank();
  hello.rank = state->rank;
  catch_sigterm_once();
  try {
    state->adopt(protocol::decode_trial_assignment(state->hello(hello), "WELCOME"));
  } catch (const slurmtune::Error& e) {
    throw ClientError(std::string("bad reply from the coordinator: ") + e.what());
  }
  return Client(std::move(state));
}

Client Client::for_group(int group, int ranks, const std::string& nodes) {
  auto state = std::make_unique<State>();
  state->group = true;
  // SLURMTUNE_STEP: which of the coordinator's MPI steps this group belongs to.
  const std::string step = env_or("SLURMTUNE_STEP", "0");
  state->hello(protocol::GroupHello{group, ranks, std::atoi(step.c_str()), nodes});
  return Client(std::move(state));
}

bool Client::next_trial() {
  state_->send(protocol::MessageType::Next, protocol::encode(protocol::Next{}));
  const auto body = state_->receive(protocol::MessageType::Assign);
  protocol::Assignment next;
  try {
    next = protocol::decode_assign(body);
  } catch (const protocol::ProtocolError& e) {
    throw ClientError(std::string("bad ASSIGN from the coordinator: ") + e.what());
  }
  if (std::holds_alternative<protocol::StudyOver>(next)) return false;
  state_->adopt(std::get<protocol::TrialAssignment>(next));
  return true;
}

void Client::end_trial(bool ok, const std::string& error) {
  state_->send(protocol::MessageType::TrialEnd, ending(ok, error));
}

const std::string& Client::assignment() const {
  return state_->assignment;
}

Decision Client::report(double step, const std::map<std::string, double>& metrics) {
  protocol::Report report{step, {}};
  for (const auto& [name, value] : metrics)
    report.metrics.emplace_back(name, value);
  return state_->exchange(protocol::MessageType::Report, protocol::encode(report), step);
}

Decision Client::ask() {
  return state_->exchange(protocol::MessageType::Ask, protocol::encode(protocol::Ask{}),
                          std::nan(""));
}

void Client::heartbeat() {
  state_->send(protocol::MessageType::Heartbeat, protocol::encode(protocol::Heartbeat{}));
}

bool Client::terminated() const {
  return state_->terminated_at.has_value();
}

bool Client::should_checkpoint() const {
  return state_->checkpoint_wanted;
}

void Client::checkpoint_saved(double step, const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  state_->send(protocol::MessageType::Checkpoint,
               protocol::encode(protocol::CheckpointSaved{step, path, ec ? 0 : size}));
  if (state_->stopped) trial_ending = 1;  // the checkpoint the stop asked for is saved
}

void Client::finish(bool ok, const std::string& error) {
  state_->finished = true;
  if (const auto& step = state_->terminated_at)  // interrupted: not a completed attempt
    return state_->send(
        protocol::MessageType::Bye,
        ending(false, "interrupted by SIGTERM after step " + core::format_double(*step) +
                          (error.empty() ? "" : "; " + error)));
  state_->send(protocol::MessageType::Bye, ending(ok, error));
}

std::uint64_t Client::trial_id() const {
  return state_->trial;
}
std::uint64_t Client::attempt() const {
  return state_->attempt;
}
int Client::rank() const {
  return state_->rank;
}
const std::string& Client::trial_dir() const {
  return state_->trial_dir;
}
const std::string& Client::checkpoint_dir() const {
  return state_->checkpoint_dir;
}
const std::string& Client::resume_checkpoint() const {
  return state_->checkpoint;
}
std::optional<double> Client::resume_step() const {
  return state_->checkpoint_step;
}

template <class T>
T Client::param(const std::string& name) const {
  return typed_param<T, ClientError>(state_->params, name);
}

bool Client::has_param(const std::string& name) const {
  return state_->params.contains(name);
}

template double Client::param<double>(const std::string&) const;
template std::int64_t Client::param<std::int64_t>(const std::string&) const;
template bool Client::param<bool>(const std::string&) const;
template std::string Client::param<std::string>(const std::string&) const;

}  // namespace slurmtune
