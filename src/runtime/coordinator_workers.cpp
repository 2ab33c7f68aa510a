// [resources] launch = "worker": one long-lived `slurmtune worker` step per node starts
// that node's trials as its own children on the coordinator's LAUNCH, so a trial costs
// a message instead of an srun step (doc/slurm.md#worker-steps). A node takes trials
// once its worker has said HELLO; a worker that goes away fails the trials it ran
// (retried elsewhere) and its node takes no more. Jobs that join the study bring
// workers of their own (coordinator_joined.cpp).
#include <algorithm>
#include <csignal>

#include "core/json.hpp"
#include "core/search/param_value.hpp"
#include "protocol/worker_messages.hpp"
#include "runtime/active_trial.hpp"
#include "runtime/coordinator.hpp"
#include "runtime/log.hpp"
#include "runtime/this_process.hpp"

namespace slurmtune::runtime {

bool Coordinator::worker_mode() const {
  return spec_.resources.launch == core::ResourceSpec::Launch::Worker;
}

void Coordinator::launch_workers() {
  const auto names = launcher_->node_names();
  for (std::size_t node = 0; node < names.size(); ++node) {
    SpawnRequest request;
    request.argv = launcher_->worker_step(node, {self_program(), "worker"});
    if (request.argv.empty()) {
      log_line("launch = \"worker\": the local launcher starts trials as its own children");
      return;
    }
    request.env = {{"SLURMTUNE_ADDR", address_},
                   {"SLURMTUNE_TOKEN_FILE", token_file_},
                   {"SLURMTUNE_WORKER_NODE", names[node]}};
    request.stdout_path = trials_dir_ + "/worker-" + names[node] + ".out";
    request.stderr_path = trials_dir_ + "/worker-" + names[node] + ".err";
    WorkerStep worker;
    worker.node = node;
    worker_of_node_[node] = names[node];
    worker.process = ChildProcess::spawn(request);
    worker.launched = Clock::now();
    launcher_->set_node_usable(node, false);  // until its worker says HELLO
    workers_.emplace(names[node], std::move(worker));
  }
  log_line("launch = \"worker\": " + std::to_string(workers_.size()) +
           " worker step(s), one per node; trials start as their children");
}

bool Coordinator::waiting_for_workers() const {
  return std::any_of(workers_.begin(), workers_.end(), [](const auto& w) {
    return w.second.allocation.empty() && !w.second.connection && !w.second.lost;
  });
}

std::string Coordinator::on_worker_hello(ConnectionId id, const protocol::WorkerHello& hello) {
  const std::string& node = hello.node;
  const auto w = workers_.find(node);
  if (w == workers_.end())
    throw ProtocolError("no worker step was started for node '" + node + "'");
  if (w->second.connection || w->second.lost)
    throw ProtocolError("node " + node + " already has its worker (or lost it)");
  w->second.connection = id;
  worker_connections_[id] = node;
  launcher_->set_node_usable(w->second.node, true);
  const auto ready = std::count_if(workers_.begin(), workers_.end(), [](const auto& x) {
    return x.second.allocation.empty() && x.second.connection.has_value();
  });
  const auto own = std::count_if(workers_.begin(), workers_.end(),
                                 [](const auto& x) { return x.second.allocation.empty(); });
  if (ready == own)
    log_line("all " + std::to_string(ready) + " worker step(s) connected after " +
             core::format_double(time_.elapsed_s()) + " s");
  return protocol::encode(protocol::WorkerWelcome{node, ""});
}

TrialProcess Coordinator::start_on_worker(ActiveTrial& t, const TrialProcessSpec& spec) {
  // One node: worker trials are single-rank.
  const ConnectionId worker =
      *workers_.at(worker_of_node_.at(t.placement.nodes.front())).connection;
  const protocol::ProcessKey key{t.trial, t.attempt};
  server_->send(worker, MessageType::Launch,
                protocol::encode(protocol::Launch{key, spec.argv, spec.env, spec.stdout_path,
                                                  spec.stderr_path, t.placement.gpus}));
  return TrialProcess::remote([this, worker, key](int signal) {
    server_->send(worker, MessageType::Signal, protocol::encode(protocol::Signal{key, signal}));
  });
}

std::optional<Reply> Coordinator::on_worker_message(ConnectionId, const std::string& key,
                                                    MessageType type,
                                                    const core::JsonObject& body) {
  const WorkerStep& w = workers_.at(key);
  if (type == MessageType::Leaving && !w.allocation.empty()) {
    allocation_leaving(w.allocation, protocol::decode_leaving(body).why);
    return std::nullopt;
  }
  if (type != MessageType::Exited)
    throw ProtocolError("a worker may not send " + std::string(to_string(type)));
  on_worker_exited(w, protocol::decode_exited(body));
  return std::nullopt;
}

void Coordinator::on_worker_exited(const WorkerStep& w, const protocol::Exited& exited) {
  const auto it = active_.find(exited.key.trial);
  // An attempt that already ended here (its worker was lost, or said so late) is done.
  if (it == active_.end()) return;
  ActiveTrial& t = *it->second;
  if (t.attempt != exited.key.attempt || !t.process.is_remote() || t.process.status()) return;
  if (t.placement.nodes.front() != w.node)
    throw ProtocolError("EXITED for trial " + exited.key.text() + ", which runs on another node");
  ExitStatus status;
  status.code = exited.code;
  status.signal = exited.signal;
  status.signaled = exited.signaled;
  if (!exited.error.empty())
    t.fault = "the worker on " + t.placement.hostlist + " could not start it: " + exited.error;
  t.process.ended(status);
  if (messages_drained(t)) finish_trial(exited.key.trial);
}

void Coordinator::worker_lost(const std::string& key, const std::string& why) {
  WorkerStep& w = workers_.at(key);
  if (w.lost) return;
  w.lost = true;
  if (w.connection) {
    worker_connections_.erase(*w.connection);
    // A worker still alive (its srun went first) ends and takes its children with it.
    server_->close(*w.connection, "your node takes no more trials");
  }
  w.connection.reset();
  // Its step ends too (srun passes SIGTERM on): nothing of it should start trials later.
  if (w.allocation.empty() && !w.process.poll()) w.process.signal_group(SIGTERM);
  launcher_->set_node_usable(w.node, false);
  // A joined job at its end takes its trials along: they restart elsewhere from their
  // checkpoints instead of failing.
  const bool evict = evicts_when_lost(w);
  log_line("worker step on " + key + " lost (" + why + "): its trials " +
           (evict ? "restart from their checkpoints" : "fail and are retried") +
           " elsewhere; the node takes no more");
  std::vector<core::TrialId> ended;
  for (auto& [id, t] : active_) {
    if (!t->process.is_remote() || t->process.status() || t->placement.nodes.at(0) != w.node)
      continue;
    if (evict && controller_->instruction(id) == core::Instruction::Continue)
      controller_->evict(id);
    t->fault = "its worker step on " + key + " was lost (" + why + ")";
    t->process.ended(ExitStatus{0, SIGKILL, true});
    ended.push_back(id);
  }
  // Its trials are over now: on a cluster that tracks processes by parent, children can
  // outlive a killed worker, and their reports must not count any more.
  for (const core::TrialId id : ended) {
    for (auto c = connections_.begin(); c != connections_.end();) {
      if (c->second != id) {
        ++c;
        continue;
      }
      const ConnectionId connection = c->first;
      c = connections_.erase(c);
      server_->close(connection, "trial " + std::to_string(id) + " ended with its worker");
    }
    finish_trial(id);
  }
  const bool any_left =
      std::any_of(workers_.begin(), workers_.end(), [](const auto& x) { return !x.second.lost; });
  if (worker_mode() && !any_left && !done_ && !controller_->shutting_down())
    throw Error("every worker step is gone (the last: " + key + ", " + why + "); see " +
                trials_dir_ + "/worker-*.err");
}

void Coordinator::reap_workers() {
  for (auto& [key, w] : workers_)
    if (w.allocation.empty() && !w.lost && w.process.poll() && !done_)
      worker_lost(key, "its step ended: " + w.process.status()->describe());
}

// A worker step Slurm never started (its node busy or down), or whose worker never
// connected, would keep the study waiting for its node forever: after this long the
// study goes on without it.
void Coordinator::expire_unconnected_workers() {
  const auto within = std::chrono::duration<double>(options_.worker_connect_timeout_s);
  for (auto& [node, w] : workers_)
    if (w.allocation.empty() && !w.lost && !w.connection && Clock::now() - w.launched > within)
      worker_lost(node, "its worker did not connect within " +
                            core::format_double(options_.worker_connect_timeout_s) +
                            " s of its srun");
}

void Coordinator::stop_workers(bool study_over) {
  for (auto& [key, w] : workers_)
    if (w.connection && (study_over || w.allocation.empty()))
      server_->send(*w.connection, MessageType::Launch, "{\"done\": true}");
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  for (auto& [key, w] : workers_) {
    while (w.allocation.empty() && !w.process.poll() && Clock::now() < deadline)
      loop_.run_once(50);
    // Still running (srun slow to end): its destructor kills the step.
  }
}

}  // namespace slurmtune::runtime
