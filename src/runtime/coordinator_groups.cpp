// [trial] mode = "mpi": one MPI step runs the user's program over the whole allocation;
// slurmtune::run_trials inside it splits the ranks into per-trial groups, and each
// group's rank 0 connects here, asks for work (NEXT), gets a trial (ASSIGN), reports
// like any trial, and says how it ended (TRIAL_END). Groups run trials back to back:
// no process start-up between trials. A crashing rank ends its whole step (one
// MPI_COMM_WORLD): its groups' trials fail (and are retried) and the step is relaunched.
// layout = "steps" launches one step per group instead, so a crash takes down one group.
#include <cstdlib>
#include <filesystem>

#include "core/search/param_value.hpp"
#include "protocol/trial_messages.hpp"
#include "runtime/active_trial.hpp"
#include "runtime/coordinator.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;

std::string Coordinator::trial_shape() const {
  const auto& r = spec_.resources;
  if (r.gpus_per_task > 0) {
    const std::int64_t ranks = r.ranks_per_trial ? *r.ranks_per_trial : r.ranks();
    return "gpus:" + std::to_string(ranks) + ":" + std::to_string(r.ntasks_per_node);
  }
  if (r.ranks_per_trial) return "ranks:" + std::to_string(*r.ranks_per_trial);
  return "nodes:" + std::to_string(r.nodes);
}

void Coordinator::ensure_steps() {
  if (controller_->shutting_down() || done_) return;
  if (split_layout()) {
    if (steps_.empty() && step_launches_ == 0) launch_step({});
    return;
  }
  // layout "steps": one step per trial's worth of resources, as many as fit
  const auto& limit = spec_.resources.max_concurrent;
  while (!limit || static_cast<std::int64_t>(steps_.size()) < *limit) {
    auto placement = launcher_->reserve();
    if (!placement) break;
    launch_step(std::move(*placement));
  }
}

void Coordinator::launch_step(TrialResources placement) {
  const int number = ++step_launches_;
  SpawnRequest request;
  const auto& r = spec_.resources;
  // A step of layout "steps" is one group: all of its ranks form the trial.
  const std::string shape = split_layout() ? trial_shape() : "ranks:" + std::to_string(r.ranks());
  request.argv = split_layout() ? launcher_->whole_step(spec_.trial.program)
                                : launcher_->wrap(placement, spec_.trial.program);
  request.env = {{"SLURMTUNE_ADDR", address_},
                 {"SLURMTUNE_TOKEN_FILE", token_file_},
                 {"SLURMTUNE_STUDY", spec_.name},
                 {"SLURMTUNE_STEP", std::to_string(number)},
                 {"SLURMTUNE_TRIAL_SHAPE", shape}};
  // Python trial groups (slurmtune.trial) import slurmtune's package like trials do.
  if (!python_path_.empty()) request.env["PYTHONPATH"] = python_path_;
  // Between its collectives a group's ranks wait on rank 0's exchange with the
  // coordinator; Open MPI's ranks otherwise spin on every core while they wait, and on
  // a node whose cores are all busy rank 0 and the coordinator then answer a scheduler
  // time slice late (24 ms instead of 0.2 ms per trial; doc/performance.md). The user's
  // own setting wins.
  if (!std::getenv("OMPI_MCA_mpi_yield_when_idle"))
    request.env["OMPI_MCA_mpi_yield_when_idle"] = "1";
  const std::string stem = trials_dir_ + "/step-" + std::to_string(number);
  request.stdout_path = stem + ".out";
  request.stderr_path = stem + ".err";
  GroupStep step;
  step.process = ChildProcess::spawn(request);
  step.placement = std::move(placement);
  steps_.emplace(number, std::move(step));
  std::string line = "MPI step " + std::to_string(number) + " (" + shape + "):";
  for (const auto& arg : request.argv)
    line += " " + arg;
  log_line(line);
}

void Coordinator::signal_steps(int signal) {
  for (auto& [number, step] : steps_)
    step.process.signal_group(signal);
}

std::string Coordinator::group_name(const TrialGroup& g) {
  return std::to_string(g.step) + "." + std::to_string(g.index);
}

std::string Coordinator::on_group_hello(ConnectionId id, const protocol::GroupHello& hello) {
  TrialGroup g;
  g.index = hello.group;
  g.ranks = hello.ranks;
  g.step = hello.step;
  g.nodes = hello.nodes;
  log_line("trial group " + group_name(g) + " ready: " + std::to_string(g.ranks) + " rank(s) on " +
           g.nodes);
  if (const auto step = steps_.find(g.step); step != steps_.end()) ++step->second.groups;
  groups_.emplace(id, g);
  return protocol::encode(protocol::GroupWelcome{g.index});
}

std::optional<Reply> Coordinator::on_group_message(ConnectionId id, TrialGroup& g, MessageType type,
                                                   const core::JsonObject& body) {
  switch (type) {
    case MessageType::Next:
      if (g.trial) throw ProtocolError("NEXT while trial " + std::to_string(*g.trial) + " runs");
      g.waiting = true;
      serve_groups();  // answers through the server when work is there
      return std::nullopt;
    case MessageType::TrialEnd: {
      if (!g.trial) throw ProtocolError("TRIAL_END without a trial");
      const auto ending = protocol::decode_trial_ending(body, "TRIAL_END");
      end_group_trial(g, ending.completed, ending.error);
      return std::nullopt;
    }
    case MessageType::Report:
    case MessageType::Checkpoint:
    case MessageType::Heartbeat: {
      if (!g.trial) throw ProtocolError(std::string(to_string(type)) + " without a trial");
      ActiveTrial& t = *active_.at(*g.trial);
      t.last_sign = Clock::now();
      if (type == MessageType::Report) return on_report(t, id, body);
      if (type == MessageType::Checkpoint) on_checkpoint(t, body);
      return std::nullopt;
    }
    default:
      throw ProtocolError("a trial group may not send " + std::string(to_string(type)));
  }
}

void Coordinator::serve_groups() {
  ensure_steps();
  const bool stopping = controller_->shutting_down() || done_;
  bool nothing_to_launch = stopping;
  for (auto& [id, g] : groups_) {
    if (!g.waiting) continue;
    // A vanished group means its step is going down (one MPI_COMM_WORLD): the other
    // groups of that step get nothing more; the relaunched step takes over.
    if (const auto step = steps_.find(g.step); step != steps_.end() && step->second.failing)
      continue;
    std::optional<core::TrialLaunch> launch;
    if (!stopping) launch = controller_->next_launch(time_.elapsed_s(), time_.fits_before_end());
    if (!launch) {
      nothing_to_launch = true;
      if (!stopping) note_held_work();
      continue;
    }
    ActiveTrial& t = register_trial(*launch, TrialResources{{}, g.nodes, {}});
    t.group = id;
    t.reporter = id;
    connections_[id] = t.trial;
    g.trial = t.trial;
    g.waiting = false;
    study_.writer->set_nodes(t.trial, g.nodes);
    log_line("trial " + std::to_string(t.trial) + " " + std::string(core::to_string(launch->kind)) +
             " in group " + group_name(g) + " (" + g.nodes + "): " + t.params_json);
    server_->send(id, MessageType::Assign, protocol::encode(t.assignment()));
  }
  // A healthy group asked and the controller had nothing, and nothing runs: the study is
  // over. Tell every waiting group, so the steps end.
  if (nothing_to_launch && active_.empty()) {
    done_ = true;
    for (auto& [id, g] : groups_) {
      if (!g.waiting) continue;
      g.waiting = false;
      server_->send(id, MessageType::Assign, "{\"done\": true}");
    }
  }
}

void Coordinator::end_group_trial(TrialGroup& g, bool ok, const std::string& reported) {
  const core::TrialId id = *g.trial;
  g.trial.reset();
  const std::string& fault = active_.at(id)->fault;
  const std::string error = fault.empty() ? reported : fault + "; " + reported;
  const auto meaning = controller_->trial_exited(id, ok && fault.empty(), error);
  time_.attempt_ended(id);
  if (!ok && meaning != core::ExitMeaning::Retried && meaning != core::ExitMeaning::Ended)
    log_line("trial " + std::to_string(id) + " left unfinished: " + error);
  connections_.erase(std::find_if(connections_.begin(), connections_.end(),
                                  [id](const auto& c) { return c.second == id; }));
  carry_out_exploits();
  cloned_checkpoint_.erase(id);
  active_.erase(id);
}

void Coordinator::step_ended(int number) {
  GroupStep& step = steps_.at(number);
  const std::string status = step.process.status()->describe();
  const std::string log = trials_dir_ + "/step-" + std::to_string(number) + ".err";
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (it->second.step != number) {
      ++it;
      continue;
    }
    if (it->second.trial)
      end_group_trial(it->second, false, "the MPI step ended (" + status + "); see " + log);
    it = groups_.erase(it);
  }
  const bool any_group = step.groups > 0, ended_for_trial = step.ended_for_trial;
  if (!split_layout()) launcher_->release(step.placement);
  steps_.erase(number);
  if (done_ || controller_->shutting_down()) {
    log_line("MPI step " + std::to_string(number) + " ended: " + status);
    return;
  }
  // A step that dies before any group connects may be a transient launch failure (a
  // node still cleaning up) or a broken program; both count against the restarts, and
  // the last error names the step's log.
  const std::string why = any_group ? "" : " before any trial group connected";
  if (!ended_for_trial && ++step_restarts_ > options_.max_step_restarts)
    throw Error("MPI step " + std::to_string(number) + " ended (" + status + ")" + why + "; " +
                std::to_string(step_restarts_) + " steps failed, giving up; see " + log);
  log_line("MPI step " + std::to_string(number) + " ended (" + status + ")" + why +
           " with work left: relaunching it");
  if (split_layout())
    launch_step({});
  else
    ensure_steps();
}

}  // namespace slurmtune::runtime
