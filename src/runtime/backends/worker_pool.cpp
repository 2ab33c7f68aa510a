// The worker steps of the study's own job ([resources] launch = "worker"): one
// long-lived `slurmtune worker` step per node starts that node's trials as its own
// children on LAUNCH, so a trial costs a message instead of an srun step. Jobs that join
// the study bring workers of their own (worker_pool_joined.cpp).
#include "runtime/backends/worker_pool.hpp"

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "protocol/credentials.hpp"
#include "runtime/backends/node_checkpoints.hpp"
#include "runtime/backends/run_options.hpp"
#include "runtime/log.hpp"
#include "runtime/this_process.hpp"
#include "runtime/worker/relay_tree.hpp"

namespace slurmtune::runtime {

WorkerPool::WorkerPool(const BackendContext& context,
                       std::function<void(core::TrialId)> finish_trial, const bool& study_done,
                       StepCancels& step_cancels)
    : context_(context),
      finish_trial_(std::move(finish_trial)),
      study_done_(study_done),
      step_cancels_(step_cancels) {}

void WorkerPool::launch_own_workers() {
  Launcher& launcher = context_.launcher;
  const auto names = launcher.node_names();
  // One srun for all nodes of a shape (the coordinator's node, with cores kept for it,
  // is often another): each task finds its node's name (SLURMD_NODENAME) and its
  // credential by that name.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::size_t>> shapes;
  for (std::size_t node = 0; node < names.size(); ++node) {
    const auto& capacity = launcher.node_capacity(node);
    shapes[{capacity.cpus, capacity.gpus}].push_back(node);
  }
  std::string credentials;
  for (const auto& name : names)
    credentials = context_.credentials.write_worker(name);
  relay_fanout_ = relay_fanout_for(names.size(), context_.server.stats().max_authenticated,
                                   context_.options.relay_fanout);
  const std::string relays = context_.trials_dir + "/relays";
  std::error_code ignored;
  std::filesystem::remove_all(relays, ignored);  // an earlier session's addresses
  const bool carry_steps = context_.spec.resources.ranks() > 1;
  if (carry_steps) {
    agents_folder_ = context_.trials_dir + "/agents";
    std::filesystem::remove_all(agents_folder_, ignored);
  }
  for (const auto& [shape, nodes] : shapes) {
    SpawnRequest request;
    request.argv = launcher.worker_step(nodes, {self_program(), "worker"});
    if (request.argv.empty()) {
      log_line("launch = \"worker\": the local launcher starts trials as its own children");
      return;
    }
    request.env = {{"SLURMTUNE_ADDR", context_.address},
                   {"SLURMTUNE_WORKER_CREDENTIALS", credentials}};
    if (carry_steps) request.env["SLURMTUNE_AGENTS"] = agents_folder_;
    if (relay_fanout_ > 1) {
      request.env["SLURMTUNE_RELAYS"] = relays + "/step-" + std::to_string(steps_.size());
      request.env["SLURMTUNE_RELAY_FANOUT"] = std::to_string(relay_fanout_);
    }
    // srun --output/--error with %N would split them per node; one file each keeps the
    // trials folder small at thousands of nodes, and every line names its worker.
    request.stdout_path =
        context_.trials_dir + "/workers-" + std::to_string(steps_.size()) + ".out";
    request.stderr_path =
        context_.trials_dir + "/workers-" + std::to_string(steps_.size()) + ".err";
    steps_.push_back(ChildProcess::spawn(request));
    for (const std::size_t node : nodes) {
      WorkerStep worker;
      worker.node = node;
      worker.step = steps_.size() - 1;
      worker_of_node_[node] = names[node];
      worker.launched = context_.clock.now();
      launcher.set_node_usable(node, false);  // until its worker says HELLO
      workers_.emplace(names[node], std::move(worker));
    }
  }
  own_workers_ = true;
  log_line("launch = \"worker\": " + std::to_string(workers_.size()) +
           " worker(s), one per node, in " + std::to_string(steps_.size()) + " srun step(s); " +
           (carry_steps ? "trials of " + std::to_string(context_.spec.resources.ranks()) +
                              " ranks start as their own steps, and each rank reaches the "
                              "coordinator through its node's worker"
                        : "trials start as their children and reach the coordinator through "
                          "them") +
           (relay_fanout_ > 1 ? ", and the workers through a relay per " +
                                    std::to_string(relay_fanout_) + " nodes (--relay-fanout)"
                              : ""));
}

void WorkerPool::end_step_if_unused(std::size_t step) {
  const bool serving = std::any_of(workers_.begin(), workers_.end(), [step](const auto& w) {
    return w.second.allocation.empty() && w.second.step == step && !w.second.lost;
  });
  if (!serving && !steps_.at(step).poll()) steps_.at(step).signal_group(SIGTERM);
}

bool WorkerPool::waiting() const {
  return std::any_of(workers_.begin(), workers_.end(), [](const auto& w) {
    return w.second.allocation.empty() && !w.second.connection && !w.second.lost;
  });
}

std::string WorkerPool::on_hello(ConnectionId id, const protocol::WorkerHello& hello) {
  const std::string& node = hello.node;
  const auto w = workers_.find(node);
  if (w == workers_.end())
    throw protocol::ProtocolError("no worker step was started for node '" + node + "'");
  if (w->second.connection || w->second.lost)
    throw protocol::ProtocolError("node " + node + " already has its worker (or lost it)");
  w->second.connection = id;
  connections_[id] = node;
  context_.launcher.set_node_usable(w->second.node, true);
  if (auto* checkpoints = context_.node_checkpoints)
    checkpoints->agent_connected(node, id, context_.controller);
  const auto ready = std::count_if(workers_.begin(), workers_.end(), [](const auto& x) {
    return x.second.allocation.empty() && x.second.connection.has_value();
  });
  const auto own = std::count_if(workers_.begin(), workers_.end(),
                                 [](const auto& x) { return x.second.allocation.empty(); });
  if (ready == own)
    log_line("all " + std::to_string(ready) + " worker(s) connected after " +
             core::format_double(context_.clock.elapsed_s()) + " s");
  return worker_welcome(node, "", context_.node_checkpoints);
}

void WorkerPool::check_routed(ConnectionId via, const protocol::HelloFrom& hello) const {
  const WorkerStep& w = workers_.at(connections_.at(via));
  // A relay carries the study's own workers (their credentials are checked next).
  if (std::holds_alternative<protocol::WorkerHello>(hello) && relay_fanout_ > 1 &&
      w.allocation.empty())
    return;
  const auto* trial = std::get_if<protocol::TrialHello>(&hello);
  if (!trial)
    throw protocol::ProtocolError("a node agent carries trials' connections, not " +
                                  protocol::claim_of(hello));
  const ActiveTrial* t = context_.trials.find(trial->trial);
  const auto& nodes = t ? t->placement.nodes : std::vector<std::size_t>{};
  if (std::find(nodes.begin(), nodes.end(), w.node) == nodes.end())
    throw protocol::ProtocolError("the node agent of " + connections_.at(via) +
                                  " carries only the trials placed on its node, not trial " +
                                  std::to_string(trial->trial));
}

TrialProcess WorkerPool::start(ActiveTrial& t, const TrialProcessSpec& spec) {
  // One node: worker trials are single-rank. Its worker may have gone while the launch
  // waited for its files (ProcessBackend's relaunches): the attempt fails, and is retried.
  const std::string& name = worker_of_node_.at(t.placement.nodes.front());
  const WorkerStep& w = workers_.at(name);
  if (!w.connection) throw Error("the worker of " + t.placement.hostlist + " is gone");
  const ConnectionId worker = *w.connection;
  // The worker derives the attempt's credential from its own: a worker of the study's own
  // job from its node's credential, a joined job's from the secret it holds.
  t.credential_host = w.allocation.empty() ? name : std::string();
  const protocol::ProcessKey key{t.trial, t.attempt};
  ControlServer& server = context_.server;
  server.send(worker, protocol::MessageType::Launch,
              protocol::encode(protocol::Launch{key, spec.argv, spec.env, spec.stdout_path,
                                                spec.stderr_path, t.placement.gpus,
                                                spec.checkpoint_dir_to_make, t.launch}));
  return TrialProcess::remote([&server, worker, key](int signal) {
    server.send(worker, protocol::MessageType::Signal,
                protocol::encode(protocol::Signal{key, signal}));
  });
}

void WorkerPool::admit(const ActiveTrial& t, bool admit) const {
  if (agents_folder_.empty()) return;
  const std::string message = protocol::encode(protocol::Admit{{t.trial, t.attempt}, admit});
  for (const std::size_t node : t.placement.nodes) {
    const auto name = worker_of_node_.find(node);
    if (name == worker_of_node_.end()) continue;
    if (const auto& connection = workers_.at(name->second).connection)
      context_.server.send(*connection, protocol::MessageType::Admit, message);
  }
}

std::optional<Reply> WorkerPool::on_message(ConnectionId id, protocol::MessageType type,
                                            const protocol::JsonObject& body) {
  const WorkerStep& w = workers_.at(connections_.at(id));
  if (type == protocol::MessageType::Leaving && !w.allocation.empty()) {
    allocation_leaving(w.allocation, protocol::decode_leaving(body).why);
    return std::nullopt;
  }
  if (type == protocol::MessageType::CheckpointCopied && context_.node_checkpoints) {
    context_.node_checkpoints->copied(context_.launcher.node_capacity(w.node).name,
                                      protocol::decode_checkpoint_copied(body));
    return std::nullopt;
  }
  if (type != protocol::MessageType::Exited)
    throw protocol::ProtocolError("a worker may not send " + std::string(to_string(type)));
  on_exited(w, protocol::decode_exited(body));
  return std::nullopt;
}

void WorkerPool::on_exited(const WorkerStep& w, const protocol::Exited& exited) {
  ActiveTrial* t = context_.trials.find(exited.key.trial);
  // An attempt that already ended here (its worker was lost, or said so late) is done.
  if (!t || t->attempt != exited.key.attempt || !t->process.is_remote() || t->process.status())
    return;
  if (t->placement.nodes.front() != w.node)
    throw protocol::ProtocolError("EXITED for trial " + exited.key.text() +
                                  ", which runs on another node");
  ExitStatus status;
  status.code = exited.code;
  status.signal = exited.signal;
  status.signaled = exited.signaled;
  if (!exited.error.empty())
    t->fault = "the worker on " + t->placement.hostlist + " could not start it: " + exited.error;
  t->process.ended(status);
  if (context_.trials.messages_drained(*t, context_.clock.now())) finish_trial_(exited.key.trial);
}

void WorkerPool::on_closed(ConnectionId id, const std::string& reason) {
  const std::string key = connections_.at(id);
  if (!study_done_) lost(key, "its connection closed: " + reason);
}

void WorkerPool::lost(const std::string& key, const std::string& why) {
  WorkerStep& w = workers_.at(key);
  if (w.lost) return;
  w.lost = true;
  if (w.connection) {
    connections_.erase(*w.connection);
    // A worker still alive (its srun went first) ends and takes its children with it.
    context_.server.close(*w.connection, "your node takes no more trials");
  }
  w.connection.reset();
  // Its task cannot be ended alone: told to go (the ERROR above), its worker exits and
  // kills its children. The step ends once none of its workers serves.
  if (w.allocation.empty()) end_step_if_unused(w.step);
  context_.launcher.set_node_usable(w.node, false);
  end_trials_of(w, key, why);
  if (auto* checkpoints = context_.node_checkpoints)
    checkpoints->agent_lost(context_.launcher.node_capacity(w.node).name, context_.controller);
  const bool any_left =
      std::any_of(workers_.begin(), workers_.end(), [](const auto& x) { return !x.second.lost; });
  if (own_workers_ && !any_left && !study_done_ && !context_.controller.shutting_down())
    throw Error("every worker step is gone (the last: " + key + ", " + why + "); see " +
                context_.trials_dir + "/workers-*.err");
}

// The trials of a lost worker are over now: on a cluster that tracks processes by
// parent, children can outlive a killed worker, and their reports must not count any
// more. A joined job at its end takes its trials along: they restart elsewhere from
// their checkpoints instead of failing.
void WorkerPool::end_trials_of(const WorkerStep& w, const std::string& key,
                               const std::string& why) {
  const bool evict = evicts_when_lost(w);
  std::vector<core::TrialId> ended;
  // For the log: the trials it takes down, and those already told to pause or stop
  // (their attempt ends as it was to; a pause keeps the checkpoint it saved, if any).
  std::vector<std::string> taken_down, ending_anyway;
  const auto name = [&](core::TrialId id) {
    (context_.controller.instruction(id) == core::Instruction::Continue ? taken_down
                                                                        : ending_anyway)
        .push_back(std::to_string(id));
  };
  for (auto& [id, t] : context_.trials) {
    if (t->process.status()) continue;
    const auto& nodes = t->placement.nodes;
    if (!t->process.is_remote()) {
      // A step of several ranks with ranks there: they can no longer reach the
      // coordinator, so its tasks end on every node (SIGKILL to srun alone leaves them
      // running), and the exit is classified as any step's.
      if (!agents_folder_.empty() && std::find(nodes.begin(), nodes.end(), w.node) != nodes.end()) {
        t->fault = "its node agent on " + key + " was lost (" + why + ")";
        t->hard_kill(step_cancels_);
        name(id);
      }
      continue;
    }
    if (nodes.at(0) != w.node) continue;
    name(id);
    if (evict && context_.controller.instruction(id) == core::Instruction::Continue)
      context_.controller.evict(id);
    t->fault = "its worker step on " + key + " was lost (" + why + ")";
    t->process.ended(ExitStatus{0, SIGKILL, true});
    ended.push_back(id);
  }
  const auto list = [](const std::vector<std::string>& ids) {
    return ids.empty() ? std::string("none") : core::join_names(ids);
  };
  log_line("worker step on " + key + " lost (" + why + "): its trials (" + list(taken_down) + ") " +
           (evict ? "restart from their checkpoints" : "fail and are retried") + " elsewhere" +
           (ending_anyway.empty()
                ? std::string()
                : "; (" + list(ending_anyway) + ") were told to pause or stop already and end so") +
           "; the node takes no more");
  for (const core::TrialId id : ended) {
    for (const ConnectionId connection : context_.trials.take_connections(id))
      context_.server.close(connection, "trial " + std::to_string(id) + " ended with its worker");
    finish_trial_(id);
  }
}

void WorkerPool::reap() {
  for (auto& [key, w] : workers_)
    if (w.allocation.empty() && !w.lost && steps_.at(w.step).poll() && !study_done_)
      lost(key, "its step ended: " + steps_.at(w.step).status()->describe());
}

void WorkerPool::tick() {
  expire_unconnected();
  expire_joined();
}

// A worker step Slurm never started (its node busy or down), or whose worker never
// connected, would keep the study waiting for its node forever: after this long the
// study goes on without it.
void WorkerPool::expire_unconnected() {
  const double timeout_s = context_.options.worker_connect_timeout_s;
  const auto within = std::chrono::duration<double>(timeout_s);
  for (auto& [node, w] : workers_)
    if (w.allocation.empty() && !w.lost && !w.connection &&
        context_.clock.now() - w.launched > within)
      lost(node, "its worker did not connect within " + core::format_double(timeout_s) +
                     " s of its srun");
}

void WorkerPool::stop(bool study_over) {
  for (auto& [key, w] : workers_)
    if (w.connection && (study_over || w.allocation.empty()))
      context_.server.send(*w.connection, protocol::MessageType::Launch,
                           protocol::encode(protocol::StudyOver{}));
  // A real wait for real processes: the steady clock, whatever the session's clock is.
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  for (auto& step : steps_) {
    while (!step.poll() && Clock::now() < deadline)
      context_.loop.run_once(50);
    // Still running (srun slow to end): its destructor kills the step.
  }
}

}  // namespace slurmtune::runtime
