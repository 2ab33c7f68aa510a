// Jobs that join a running study (`slurmtune join STUDY`, doc/slurm.md#joining-jobs):
// their workers find the coordinator through the address published next to the results
// file, prove the token both ways, and bring their nodes into the ledger, tagged with
// their job so that no trial spans jobs. A joined job that nears its end (its USR1
// warning, SIGTERM, or its clock) has its trials checkpoint and restart on other nodes.
#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "runtime/backends/node_checkpoints.hpp"
#include "runtime/backends/run_options.hpp"
#include "runtime/backends/worker_pool.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {

std::string joined_job_refusal(std::int64_t ranks, bool in_groups) {
  if (!in_groups && ranks == 1) return {};
  return "a joined job runs single-rank command trials on its workers, but this study's "
         "trials have " +
         std::to_string(ranks) + " rank(s)" + (in_groups ? " in MPI trial groups" : "") +
         "; multi-rank trials run in the study's own allocation";
}

void WorkerPool::check_joinable(const std::string& job) const {
  if (job == context_.launcher.job_id())
    throw protocol::ProtocolError("job " + job +
                                  " is the study's own allocation; its nodes serve it already");
  if (const std::string refusal = joined_job_refusal(context_.spec.resources.ranks(), false);
      !refusal.empty())
    throw protocol::ProtocolError(refusal);
  if (context_.controller.shutting_down())
    throw protocol::ProtocolError("this session is stopping; join the next one");
  if (const auto a = joined_.find(job); a != joined_.end() && a->second.leaving)
    throw protocol::ProtocolError("job " + job + " has said that it is leaving");
}

std::string WorkerPool::on_hello(ConnectionId id, const protocol::JoinedHello& hello) {
  const std::string &job = hello.allocation, &node = hello.node;
  check_joinable(job);
  const double end_margin_s = context_.options.end_margin_s;
  JoinedAllocation& allocation = joined_[job];
  std::string ends;
  if (hello.time_left_s) {
    const double seconds = *hello.time_left_s;
    if (seconds <= end_margin_s)
      throw protocol::ProtocolError(
          "job " + job + " ends in " + core::format_double(std::round(seconds)) +
          " s, within the end margin (--end-margin " + core::format_double(end_margin_s) +
          " s): no trial would start there");
    allocation.ends_at_s = context_.clock.elapsed_s() + seconds;
    allocation.usable_until_s = *allocation.ends_at_s - end_margin_s;
    ends = ", ends in " + core::format_double(std::round(seconds)) + " s";
  }
  const std::string key = node + " (job " + job + ")";
  auto w = workers_.find(key);
  if (w != workers_.end() && !w->second.lost)
    throw protocol::ProtocolError("node " + key + " already has its worker");
  if (w == workers_.end()) {
    core::NodeCapacity capacity{node, hello.cpus, hello.gpus, job};
    std::size_t index = 0;
    try {
      index = context_.launcher.add_node(capacity);
    } catch (const InputError& e) {
      throw protocol::ProtocolError(e.what());
    }
    WorkerStep step;
    step.node = index;
    step.allocation = job;
    step.launched = context_.clock.now();
    w = workers_.emplace(key, std::move(step)).first;
    worker_of_node_[index] = key;
  }
  w->second.lost = false;
  w->second.connection = id;
  connections_[id] = key;
  context_.launcher.set_node_usable(w->second.node, true);
  if (auto* checkpoints = context_.node_checkpoints)
    checkpoints->agent_connected(node, id, context_.controller);
  log_line("job " + job + " joined the study: " + node + ", " + std::to_string(hello.cpus) +
           " CPU(s)" + ends);
  return worker_welcome(node, job, context_.node_checkpoints);
}

void WorkerPool::allocation_leaving(const std::string& job, const std::string& why) {
  JoinedAllocation& allocation = joined_.at(job);
  if (allocation.leaving) return;
  allocation.leaving = true;
  std::set<std::size_t> nodes;
  for (const auto& [key, w] : workers_)
    if (w.allocation == job) {
      nodes.insert(w.node);
      context_.launcher.set_node_usable(w.node, false);
    }
  // As long as the job lets them: a trial still running at its end is killed with it
  // (and restarts from its last checkpoint all the same).
  const RunOptions& options = context_.options;
  double grace = options.shutdown_grace_s;
  if (allocation.ends_at_s)
    grace = std::min(grace, std::max(0.0, *allocation.ends_at_s - context_.clock.elapsed_s() -
                                              options.kill_grace_s));
  int moving = 0;
  for (auto& [id, t] : context_.trials) {
    if (!nodes.contains(t->placement.nodes.front()) || t->process.status() ||
        context_.controller.instruction(id) != core::Instruction::Continue)
      continue;
    context_.controller.evict(id);
    schedule_stop(context_.trials, *t, context_.clock.now(), grace);
    ++moving;
  }
  log_line("job " + job + " is leaving (" + why + "): " + std::to_string(moving) +
           " trial(s) checkpoint and restart on other nodes; its nodes take no more trials");
}

void WorkerPool::expire_joined() {
  std::vector<std::string> ending;
  const double now_s = context_.clock.elapsed_s();
  for (const auto& [job, a] : joined_)
    if (!a.leaving && a.usable_until_s && now_s >= *a.usable_until_s) ending.push_back(job);
  for (const auto& job : ending)
    allocation_leaving(job, "its time limit is " +
                                core::format_double(context_.options.end_margin_s) +
                                " s away (--end-margin)");
}

bool WorkerPool::evicts_when_lost(const WorkerStep& w) const {
  if (w.allocation.empty()) return false;
  const JoinedAllocation& a = joined_.at(w.allocation);
  return a.leaving || (a.usable_until_s && context_.clock.elapsed_s() >= *a.usable_until_s);
}

}  // namespace slurmtune::runtime
