#include "runtime/worker/worker.hpp"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "protocol/agent_address.hpp"
#include "protocol/auth_messages.hpp"
#include "protocol/credentials.hpp"
#include "protocol/session_messages.hpp"
#include "protocol/wire/json_value.hpp"
#include "protocol/wire/protocol.hpp"
#include "protocol/wire/secret.hpp"
#include "protocol/worker_messages.hpp"
#include "runtime/control/background_work.hpp"
#include "runtime/control/event_loop.hpp"
#include "runtime/launch/child_process.hpp"
#include "runtime/launch/job_clock.hpp"
#include "runtime/launch/launcher.hpp"
#include "runtime/log.hpp"
#include "runtime/study_paths.hpp"
#include "runtime/this_process.hpp"
#include "runtime/worker/attempt_tokens.hpp"
#include "runtime/worker/node_agent.hpp"
#include "runtime/worker/node_checkpoint_folder.hpp"
#include "runtime/worker/trial_child.hpp"
#include "runtime/worker/worker_session.hpp"

namespace slurmtune::runtime {
namespace {

using Clock = std::chrono::steady_clock;

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// How a session with one coordinator ended.
enum class SessionEnd {
  Done,        // the study is over (LAUNCH {"done": true})
  Closed,      // the coordinator closed the connection (it ended, or requeues)
  Lost,        // the connection broke, or a malformed message
  Terminated,  // this worker was told to end (SIGTERM, SIGINT)
};
class Worker {
 public:
  Worker(Session session, const WorkerOptions& options, int signals)
      : session_(std::move(session)),
        node_(options.node),
        relay_(options.relay),
        agents_folder_(options.agents_folder),
        joined_(!options.study.empty()),
        signals_(signals) {}

  SessionEnd run() {
    EventLoop loop;
    BackgroundWork files(loop);  // removals on the node's own disk, off the loop
    files_ = &files;
    std::optional<AttemptTokens> tokens;
    try {
      tokens.emplace(node_temporary_folder());
    } catch (const Error& e) {
      log_line("worker " + node_ + ": " + e.what());  // it cannot start trials
      return SessionEnd::Lost;
    }
    tokens_ = &*tokens;
    if (!session_.welcome.checkpoint_folder.empty()) {
      try {
        checkpoints_.emplace(session_.welcome.checkpoint_folder, node_, session_.welcome.study);
      } catch (const Error& e) {
        // Without its folder the node cannot take this study's trials: the coordinator
        // sees the connection close and goes on without it.
        log_line("worker " + node_ + ": " + e.what());
        return SessionEnd::Lost;
      }
    }
    // The node agent: this node's trials talk to it, and it carries their connections
    // upward on this worker's one, batched per turn of the loop.
    std::optional<NodeAgent> agent;
    try {
      agent.emplace(
          loop, [this](const std::string& frame) { upward_ += frame; },
          [this](core::TrialId trial) { return hosts(trial); });
      agent_ = &*agent;
      if (relay_.relays()) relay_for_group();
      publish_agent();
    } catch (const Error& e) {
      log_line("worker " + node_ + ": " + e.what() +
               "; its trials connect to the coordinator directly");
    }
    loop.add(signals_, EPOLLIN, [&](std::uint32_t) { on_signal(); });
    loop.add(session_.fd.get(), EPOLLIN, [&](std::uint32_t) { on_readable(); });
    drain_frames();  // what came with the WELCOME
    while (!end_) {
      loop.run_once(1000);
      if (agent_) agent_->tick();
      flush_upward();
    }
    loop.remove(signals_);
    files.drain();
    files_ = nullptr;
    children_.clear();  // kills and reaps what still runs
    agent_ = nullptr;
    tokens_ = nullptr;
    if (!published_.empty()) ::unlink(published_.c_str());
    return *end_;
  }

 private:
  // The ranks of trials started as their own steps find this node's agent by the node's
  // name in the agents' folder (client: SLURMTUNE_AGENTS); without the file they connect
  // to the coordinator directly.
  void publish_agent() {
    if (agents_folder_.empty()) return;
    published_ = protocol::agent_address_file(agents_folder_, node_);
    publish_address(published_, agent_->address());
  }

  // The first worker of each group carries the others' connections (relay_tree.hpp);
  // when it cannot, they connect directly once their wait for its address runs out.
  void relay_for_group() {
    try {
      std::string address;
      agent_->carry_agents(listen_for_agents(session_.fd.get(), address));
      publish_relay_address(relay_, address);
      log_line("worker " + node_ + ": relays for the agents of group " +
               std::to_string(relay_.group()) + " (" + std::to_string(relay_.fanout) +
               " nodes) at " + address);
    } catch (const Error& e) {
      log_line("worker " + node_ + ": " + e.what() + "; its group's agents connect directly");
    }
  }

  // After what the agent's channels sent before it: a trial's last REPORT goes up ahead
  // of its EXITED.
  void send(protocol::MessageType type, const std::string& payload) {
    upward_ += protocol::encode_frame(type, payload);
    flush_upward();
  }

  // What the agent's channels sent this turn, in one send: the batch a turn gathered.
  void flush_upward() {
    if (upward_.empty() || end_) return;
    try {
      send_bytes(session_.fd.get(), upward_);
    } catch (const Error& e) {
      lose(e.what());
    }
    upward_.clear();
  }

  // Its own children, and the steps of several ranks the coordinator placed here (ADMIT).
  bool hosts(core::TrialId trial) const {
    const auto it = children_.lower_bound(protocol::ProcessKey{trial, 0});
    if (it != children_.end() && it->first.trial == trial) return true;
    const auto step = admitted_.lower_bound(protocol::ProcessKey{trial, 0});
    return step != admitted_.end() && step->trial == trial;
  }

  void lose(const std::string& why) {
    if (end_) return;
    log_line("worker " + node_ + ": lost the coordinator (" + why + ")");
    end_ = SessionEnd::Lost;
  }

  void on_readable() {
    char buffer[65536];
    const ssize_t n = ::recv(session_.fd.get(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) return;
    if (n == 0) {
      if (!end_) end_ = SessionEnd::Closed;  // the coordinator is done with this worker
      return;
    }
    if (n < 0) return lose(std::strerror(errno));
    session_.decoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    drain_frames();
  }

  void drain_frames() {
    try {
      while (auto frame = session_.decoder.next())
        on_frame(*frame);
    } catch (const std::exception& e) {  // ProtocolError, or a field of the wrong type
      lose(std::string("a malformed message: ") + e.what());
    }
  }

  void on_frame(const protocol::Frame& frame) {
    if (frame.type == protocol::MessageType::Routed ||
        frame.type == protocol::MessageType::ChannelClosed) {
      if (!agent_) throw protocol::ProtocolError("this worker carries no channels");
      return agent_->from_coordinator(frame);
    }
    const auto body = protocol::payload_object(frame);
    switch (frame.type) {
      case protocol::MessageType::Launch: {
        const auto message = protocol::decode_launch(body);
        if (std::holds_alternative<protocol::StudyOver>(message)) {
          end_ = SessionEnd::Done;  // the study is over: nothing of ours runs any more
          return;
        }
        return launch(std::get<protocol::Launch>(message));
      }
      case protocol::MessageType::Signal: {
        const auto message = protocol::decode_signal(body);
        if (const auto child = children_.find(message.key); child != children_.end())
          child->second.signal_group(message.signal);
        return;
      }
      case protocol::MessageType::Admit: {
        const auto message = protocol::decode_admit(body);
        if (message.admit)
          admitted_.insert(message.key);
        else
          admitted_.erase(message.key);
        return;
      }
      case protocol::MessageType::Remove:
        if (!checkpoints_)
          throw protocol::ProtocolError("REMOVE, but this study keeps no checkpoints on the node");
        return checkpoints_->remove(protocol::decode_remove(body), *files_);
      case protocol::MessageType::CopyCheckpoint:
        if (!checkpoints_)
          throw protocol::ProtocolError("COPY, but this study keeps no checkpoints on the node");
        return checkpoints_->copy(protocol::decode_copy_checkpoint(body), *files_,
                                  [this](const protocol::CheckpointCopied& copied) {
                                    send(protocol::MessageType::CheckpointCopied,
                                         protocol::encode(copied));
                                  });
      case protocol::MessageType::Error:
        return lose("refused: " + protocol::decode_error(body).error);

      default:
        throw protocol::ProtocolError("a worker does not take " +
                                      std::string(to_string(frame.type)));
    }
  }

  void launch(const protocol::Launch& message) {
    SpawnRequest request = trial_child(message, node_, agent_ ? agent_->address() : "");
    try {
      if (!message.checkpoint_dir.empty()) {
        if (!checkpoints_)
          throw protocol::ProtocolError(
              "LAUNCH names a checkpoint folder on this node, but "
              "the study keeps none here");
        checkpoints_->make_trial_folder(message.checkpoint_dir);
      }
      // Its credential, derived from this worker's own: only this node's attempts can
      // use it, and the coordinator wrote no file for it.
      request.env["SLURMTUNE_TOKEN_FILE"] = tokens_->write(
          message.key, protocol::attempt_credential(session_.credential, message.key.trial,
                                                    message.key.attempt, message.launch));
      children_.insert_or_assign(message.key, ChildProcess::spawn(request));
    } catch (const Error& e) {
      send(protocol::MessageType::Exited,
           protocol::encode(protocol::Exited{message.key, 127, 0, false, e.what()}));
    }
  }

  void on_signal() {
    signalfd_siginfo info{};
    bool terminate = false, leaving = false;
    while (::read(signals_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      terminate = terminate || info.ssi_signo == SIGTERM || info.ssi_signo == SIGINT;
      leaving = leaving || info.ssi_signo == SIGUSR1;
    }
    // A joined job's end: its trials checkpoint and move to other allocations' nodes.
    if (joined_ && (terminate || leaving) && !told_leaving_) {
      told_leaving_ = true;
      send(protocol::MessageType::Leaving,
           protocol::encode(protocol::Leaving{terminate ? "SIGTERM: the job ends"
                                                        : "SIGUSR1: its time limit is near"}));
    }
    if (terminate) {
      terminated_ = true;
      for (const auto& [key, child] : children_)
        child.signal_group(SIGTERM);
    }
    for (auto it = children_.begin(); it != children_.end();) {
      if (const auto& status = it->second.poll()) {
        send(protocol::MessageType::Exited,
             protocol::encode(
                 protocol::Exited{it->first, status->code, status->signal, status->signaled, {}}));
        tokens_->remove(it->first);
        it = children_.erase(it);
      } else {
        ++it;
      }
    }
    // Told to end and nothing left to report: the session is over for this worker.
    if (terminated_ && children_.empty() && !end_) end_ = SessionEnd::Terminated;
  }

  Session session_;
  NodeAgent* agent_ = nullptr;                       // this session's, while it runs
  AttemptTokens* tokens_ = nullptr;                  // ... its trials' credentials
  BackgroundWork* files_ = nullptr;                  // ... and its helper thread
  std::optional<NodeCheckpointFolder> checkpoints_;  // [checkpoints] node_local
  std::string upward_;  // frames the agent's channels send, until the turn ends
  std::string node_;
  RelayPlace relay_;
  std::string agents_folder_, published_;
  bool joined_;
  int signals_;
  std::map<protocol::ProcessKey, ChildProcess> children_;
  std::set<protocol::ProcessKey> admitted_;  // steps of several ranks placed on this node
  std::optional<SessionEnd> end_;
  bool terminated_ = false, told_leaving_ = false;
};

}  // namespace

namespace {

protocol::HelloFrom hello_from(const WorkerOptions& options) {
  const std::string job = env_or_empty("SLURM_JOB_ID"), step = env_or_empty("SLURM_STEP_ID");
  const std::string slurm_step = !job.empty() && !step.empty() ? job + "." + step : "";
  if (options.study.empty()) return protocol::WorkerHello{options.node, slurm_step};
  protocol::JoinedHello hello;
  hello.node = options.node;
  hello.allocation = options.allocation;
  hello.slurm_step = slurm_step;
  hello.cpus = options.cpus;
  hello.gpus = options.gpus;
  // Asked at every connect: a requeued coordinator learns how long this job still has.
  hello.time_left_s = slurm_time_left(environment_map(), options.scratch).seconds;
  return hello;
}

std::string read_published_address(const std::string& path) {
  std::ifstream in(path);
  std::string address;
  if (!in || !std::getline(in, address) || address.empty())
    throw Error("no coordinator is published in " + path + " (the study is not running)");
  return address;
}

// Whether SIGTERM or SIGINT arrived while no session ran.
bool termination_pending(int signals) {
  signalfd_siginfo info{};
  bool terminate = false;
  while (::read(signals, &info, sizeof info) == static_cast<ssize_t>(sizeof info))
    terminate = terminate || info.ssi_signo == SIGTERM || info.ssi_signo == SIGINT;
  return terminate;
}

// A joined worker looks for the study's coordinator until `deadline`: the address and
// token are read again at every try (a requeued coordinator has new ones). nullopt when
// none answered in time, or when the worker was told to end (`terminated`).
std::optional<Session> find_coordinator(const WorkerOptions& options, int signals,
                                        Clock::time_point deadline, bool& terminated) {
  std::string last_error;
  for (;;) {
    try {
      const std::string address = read_published_address(address_file_of(options.study));
      const std::string token_file = token_file_of(options.study);
      if (!std::filesystem::exists(token_file))
        throw InputError("the study's coordinator accepts no joined jobs (" + token_file +
                         " is absent): run the study with `slurmtune run --accept-joins`");
      return open_session(address, protocol::read_token_file(token_file), hello_from(options));
    } catch (const Error& e) {
      if (e.what() != last_error)
        log_line("worker " + options.node + ": " + e.what() + "; trying again");
      last_error = e.what();
    }
    const auto left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0) {
      log_line("worker " + options.node + ": no coordinator of " + options.study + " within " +
               core::format_double(options.reconnect_timeout_s) + " s; leaving");
      return std::nullopt;
    }
    pollfd p{signals, POLLIN, 0};
    const double nap = std::min(left, options.retry_interval_s);
    if (::poll(&p, 1, static_cast<int>(nap * 1000)) > 0 && termination_pending(signals)) {
      terminated = true;
      return std::nullopt;
    }
  }
}

// A relayed worker's way up: its group's relay once the relay has published its
// address (within relay_wait_s), else the coordinator. nullopt when told to end meanwhile.
std::optional<std::string> upward_address(const WorkerOptions& options, int signals) {
  if (!options.relay.relayed()) return options.address;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options.relay_wait_s));
  std::minstd_rand jitter(static_cast<std::uint32_t>(std::hash<std::string>{}(options.node)));
  for (;;) {
    if (auto relay = published_relay_address(options.relay)) return relay;
    if (Clock::now() >= deadline) break;
    pollfd p{signals, POLLIN, 0};
    const int nap_ms = std::uniform_int_distribution<int>(200, 400)(jitter);
    if (::poll(&p, 1, nap_ms) > 0 && termination_pending(signals)) return std::nullopt;
  }
  log_line("worker " + options.node + ": no relay published " + options.relay.address_file() +
           " within " + core::format_double(options.relay_wait_s) +
           " s; connecting to the coordinator directly");
  return options.address;
}

// The study's own worker: a coordinator without room now (its connections all taken)
// says when to come back, and the worker does, with up to half that again so that a
// herd of workers spreads out, for at most reconnect_timeout_s. A relay that does not
// answer is left for the coordinator itself.
Session connect_own_worker(const WorkerOptions& options, int signals) {
  std::minstd_rand jitter(static_cast<std::uint32_t>(std::hash<std::string>{}(options.node)));
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(options.reconnect_timeout_s));
  auto address = upward_address(options, signals);
  if (!address) throw Error("told to end while waiting for its relay");
  for (bool told = false;; told = true) {
    try {
      return open_session(*address, protocol::read_token_file(options.token_file),
                          hello_from(options));
    } catch (const NoRoomYet& no_room) {
      const double wait_s =
          no_room.retry_after_s * (1 + std::uniform_real_distribution<double>(0, 0.5)(jitter));
      if (Clock::now() + std::chrono::duration<double>(wait_s) > deadline) throw;
      if (!told) log_line("worker " + options.node + ": " + no_room.what() + "; trying again");
      pollfd p{signals, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(wait_s * 1000)) > 0 && termination_pending(signals))
        throw Error("told to end while waiting for room at the coordinator");
    } catch (const Error& e) {
      if (*address == options.address) throw;
      log_line("worker " + options.node + ": its relay at " + *address + " failed (" + e.what() +
               "); connecting to the coordinator directly");
      address = options.address;
    }
  }
}

int run_joined_worker(const WorkerOptions& options, int signals) {
  const auto within = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options.reconnect_timeout_s));
  for (;;) {
    bool terminated = false;
    auto session = find_coordinator(options, signals, Clock::now() + within, terminated);
    if (!session) return terminated ? 0 : 1;
    log_line("worker " + options.node + " of job " + options.allocation +
             ": serving the study's trials on this node");
    switch (Worker(std::move(*session), options, signals).run()) {
      case SessionEnd::Done:
        log_line("worker " + options.node + ": the study is over");
        return 0;
      case SessionEnd::Terminated:
        return 0;
      case SessionEnd::Closed:
      case SessionEnd::Lost:
        log_line("worker " + options.node + ": the coordinator's session ended; waiting up to " +
                 core::format_double(options.reconnect_timeout_s) + " s for the next one");
    }
  }
}

}  // namespace

int run_worker(const WorkerOptions& options) {
  try {
    const protocol::UniqueFd signals = make_signal_fd({SIGCHLD, SIGTERM, SIGINT, SIGUSR1});
    // The job's time-limit warning (USR1, passed on by `join` to the worker steps' srun)
    // reaches every process of the step, trials included, whose default is to die of it;
    // one that died before this worker told the coordinator LEAVING counted as a failed
    // attempt. The warning is slurmtune's: the coordinator moves the trials with a
    // checkpoint. So the trials ignore it (SIG_IGN is inherited across exec). The signalfd
    // still gets it here: Linux never discards a blocked signal as ignored.
    std::signal(SIGUSR1, SIG_IGN);
    // Its node's trials inherit the limit, and the agent holds a descriptor per channel.
    if (const std::string raised = raise_descriptor_limit(); !raised.empty())
      log_line("worker " + options.node + ": " + raised);
    if (!options.study.empty()) return run_joined_worker(options, signals.get());
    auto session = connect_own_worker(options, signals.get());
    log_line("worker " + options.node + ": serving the study's trials on this node");
    return Worker(std::move(session), options, signals.get()).run() == SessionEnd::Lost ? 1 : 0;
  } catch (const Error& e) {
    log_line("worker " + options.node + ": " + e.what());
    return 1;
  }
}

}  // namespace slurmtune::runtime
