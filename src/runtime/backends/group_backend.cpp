#include "runtime/backends/group_backend.hpp"

#include <csignal>
#include <cstdlib>

#include "core/error.hpp"
#include "protocol/trial_messages.hpp"
#include "runtime/backends/run_options.hpp"
#include "runtime/backends/worker_pool.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {
namespace {

std::chrono::steady_clock::time_point after(const SessionClock& clock, double seconds) {
  return clock.now() + steady_seconds(seconds);
}

// Layout "split": one MPI step over the whole allocation, split into trial groups.
bool split_layout(const core::StudySpec& spec) {
  return spec.trial.layout == core::TrialSpec::Layout::Split;
}

}  // namespace

GroupBackend::GroupBackend(const BackendContext& context) : context_(context) {}

std::string GroupBackend::trial_shape() const {
  const auto& r = context_.spec.resources;
  if (r.gpus_per_task > 0) {
    const std::int64_t ranks = r.ranks_per_trial ? *r.ranks_per_trial : r.ranks();
    return "gpus:" + std::to_string(ranks) + ":" + std::to_string(r.ntasks_per_node);
  }
  if (r.ranks_per_trial) return "ranks:" + std::to_string(*r.ranks_per_trial);
  return "nodes:" + std::to_string(r.nodes);
}

void GroupBackend::ensure_steps() {
  if (context_.controller.shutting_down() || done_) return;
  if (split_layout(context_.spec)) {
    if (steps_.empty() && step_launches_ == 0) launch_step({});
    return;
  }
  // layout "steps": one step per trial's worth of resources, as many as fit
  const auto& limit = context_.spec.resources.max_concurrent;
  while (!limit || static_cast<std::int64_t>(steps_.size()) < *limit) {
    auto placement = context_.launcher.reserve();
    if (!placement) break;
    launch_step(std::move(*placement));
  }
}

void GroupBackend::launch_step(TrialResources placement) {
  const int number = ++step_launches_;
  const core::StudySpec& spec = context_.spec;
  SpawnRequest request;
  // A step of layout "steps" is one group: all of its ranks form the trial.
  const std::string shape = split_layout(context_.spec)
                                ? trial_shape()
                                : "ranks:" + std::to_string(spec.resources.ranks());
  request.argv = split_layout(context_.spec)
                     ? context_.launcher.whole_step(spec.trial.program)
                     : context_.launcher.wrap(placement, spec.trial.program);
  request.env = {{"SLURMTUNE_ADDR", context_.address},
                 {"SLURMTUNE_TOKEN_FILE", context_.credentials.write_group_step(number)},
                 {"SLURMTUNE_STUDY", spec.name},
                 {"SLURMTUNE_STEP", std::to_string(number)},
                 {"SLURMTUNE_TRIAL_SHAPE", shape}};
  // Python trial groups (slurmtune.trial) import slurmtune's package like trials do.
  if (!context_.python_path.empty()) request.env["PYTHONPATH"] = context_.python_path;
  // Between its collectives a group's ranks wait on rank 0's exchange with the
  // coordinator; Open MPI's ranks otherwise spin on every core while they wait, and on
  // a node whose cores are all busy rank 0 and the coordinator then answer a scheduler
  // time slice late (24 ms instead of 0.2 ms per trial; doc/performance.md). The user's
  // own setting wins.
  if (!std::getenv("OMPI_MCA_mpi_yield_when_idle"))
    request.env["OMPI_MCA_mpi_yield_when_idle"] = "1";
  const std::string stem = context_.trials_dir + "/step-" + std::to_string(number);
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

void GroupBackend::signal_steps(int signal) {
  for (auto& [number, step] : steps_)
    step.process.signal_group(signal);
}

std::string GroupBackend::group_name(const TrialGroup& g) {
  return std::to_string(g.step) + "." + std::to_string(g.index);
}

std::string GroupBackend::on_hello(ConnectionId id, const protocol::HelloFrom& from) {
  if (std::holds_alternative<protocol::JoinedHello>(from))
    throw protocol::ProtocolError(joined_job_refusal(context_.spec.resources.ranks(), true));
  const auto* hello = std::get_if<protocol::GroupHello>(&from);
  if (!hello)
    throw protocol::ProtocolError("a worker connected, but [resources] launch is not worker");
  // The credential covered the step the HELLO names; a step this session is not running
  // (one it relaunched, say) speaks for nothing.
  const auto step = steps_.find(hello->step);
  if (step == steps_.end())
    throw protocol::ProtocolError("MPI step " + std::to_string(hello->step) + " is not running");
  TrialGroup g;
  g.index = hello->group;
  g.ranks = hello->ranks;
  g.step = hello->step;
  g.nodes = hello->nodes;
  log_line("trial group " + group_name(g) + " ready: " + std::to_string(g.ranks) + " rank(s) on " +
           g.nodes);
  ++step->second.groups;
  groups_.emplace(id, g);
  return protocol::encode(protocol::GroupWelcome{g.index});
}

std::optional<Reply> GroupBackend::on_message(ConnectionId id, protocol::MessageType type,
                                              const protocol::JsonObject& body) {
  TrialGroup& g = groups_.at(id);
  switch (type) {
    case protocol::MessageType::Next:
      if (g.trial)
        throw protocol::ProtocolError("NEXT while trial " + std::to_string(*g.trial) + " runs");
      g.waiting = true;
      fill();  // answers through the server when work is there
      return std::nullopt;
    case protocol::MessageType::TrialEnd: {
      if (!g.trial) throw protocol::ProtocolError("TRIAL_END without a trial");
      const auto ending = protocol::decode_trial_ending(body, "TRIAL_END");
      end_group_trial(g, ending.completed, ending.error);
      return std::nullopt;
    }
    case protocol::MessageType::Report:
    case protocol::MessageType::Checkpoint:
    case protocol::MessageType::Heartbeat:
      // With a trial, the coordinator took it (trial_of); here only without one.
      throw protocol::ProtocolError(std::string(to_string(type)) + " without a trial");
    default:
      throw protocol::ProtocolError("a trial group may not send " + std::string(to_string(type)));
  }
}

std::optional<core::TrialId> GroupBackend::trial_of(ConnectionId id) const {
  const auto it = groups_.find(id);
  return it == groups_.end() ? std::nullopt : it->second.trial;
}

void GroupBackend::fill() {
  ensure_steps();
  core::StudyController& controller = context_.controller;
  const bool stopping = controller.shutting_down() || done_;
  bool nothing_to_launch = stopping;
  for (auto& [id, g] : groups_) {
    if (!g.waiting) continue;
    // A vanished group means its step is going down (one MPI_COMM_WORLD): the other
    // groups of that step get nothing more; the relaunched step takes over.
    if (const auto step = steps_.find(g.step); step != steps_.end() && step->second.failing)
      continue;
    std::optional<core::TrialLaunch> launch;
    if (!stopping) {
      controller.stamp(context_.clock.unix_now());  // the start or resumption's recorded time
      const auto suggesting = context_.stalls.measure(core::LoopWork::Suggestions);
      launch = controller.next_launch(context_.clock.elapsed_s(), context_.clock.fits_before_end());
    }
    if (!launch) {
      nothing_to_launch = true;
      if (!stopping) context_.host.nothing_to_launch();
      continue;
    }
    assign(id, g, *launch);
  }
  // A healthy group asked and the controller had nothing, nothing runs and no launch
  // waits for its files: the study is over. Tell every waiting group, so the steps end.
  if (nothing_to_launch && context_.trials.empty() && !controller.launches_held()) {
    done_ = true;
    for (auto& [id, g] : groups_) {
      if (!g.waiting) continue;
      g.waiting = false;
      context_.server.send(id, protocol::MessageType::Assign,
                           protocol::encode(protocol::Assignment{protocol::StudyOver{}}));
    }
  }
}

void GroupBackend::assign(ConnectionId id, TrialGroup& g, const core::TrialLaunch& launch) {
  ActiveTrial& t = context_.host.register_trial(launch, TrialResources{{}, g.nodes, {}});
  t.group = id;
  t.reporter = id;
  context_.trials.bind(id, t.trial);
  g.trial = t.trial;
  g.waiting = false;
  log_line("trial " + std::to_string(t.trial) + " " + std::string(core::to_string(launch.kind)) +
           " in group " + group_name(g) + " (" + g.nodes + "): " + t.params_json);
  context_.server.send(id, protocol::MessageType::Assign,
                       protocol::encode(protocol::Assignment{t.assignment()}));
}

void GroupBackend::end_group_trial(TrialGroup& g, bool ok, const std::string& reported) {
  const core::TrialId id = *g.trial;
  g.trial.reset();
  const std::string fault = context_.trials.find(id)->fault;
  const std::string error = fault.empty() ? reported : fault + "; " + reported;
  const auto meaning = context_.host.end_trial(id, ok && fault.empty(), error);
  if (!ok && meaning != core::ExitMeaning::Retried && meaning != core::ExitMeaning::Ended)
    log_line("trial " + std::to_string(id) + " left unfinished: " + error);
}

void GroupBackend::on_closed(ConnectionId id, const std::string& reason) {
  const auto g = groups_.find(id);
  if (const auto step = steps_.find(g->second.step); step != steps_.end() && !done_)
    step->second.failing = true;
  if (g->second.trial)
    end_group_trial(
        g->second, false,
        "trial group " + group_name(g->second) + " lost its connection (" + reason + ")");
  groups_.erase(g);
}

void GroupBackend::reap() {
  std::vector<int> ended;
  for (auto& [number, step] : steps_)
    if (step.process.poll()) ended.push_back(number);
  for (const int number : ended)
    step_ended(number);
}

void GroupBackend::step_ended(int number) {
  GroupStep& step = steps_.at(number);
  const std::string status = step.process.status()->describe();
  const std::string log = context_.trials_dir + "/step-" + std::to_string(number) + ".err";
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
  if (!split_layout(context_.spec)) context_.launcher.release(step.placement);
  steps_.erase(number);
  if (done_ || context_.controller.shutting_down()) {
    log_line("MPI step " + std::to_string(number) + " ended: " + status);
    return;
  }
  // A step that dies before any group connects may be a transient launch failure (a
  // node still cleaning up) or a broken program; both count against the restarts, and
  // the last error names the step's log.
  const std::string why = any_group ? "" : " before any trial group connected";
  if (!ended_for_trial && ++step_restarts_ > context_.options.max_step_restarts)
    throw Error("MPI step " + std::to_string(number) + " ended (" + status + ")" + why + "; " +
                std::to_string(step_restarts_) + " steps failed, giving up; see " + log);
  log_line("MPI step " + std::to_string(number) + " ended (" + status + ")" + why +
           " with work left: relaunching it");
  if (split_layout(context_.spec))
    launch_step({});
  else
    ensure_steps();
}

// A trial group cannot leave its step's collectives alone: its step goes (the other
// groups' trials resume from their checkpoints in the relaunched step).
void GroupBackend::end_attempt(ActiveTrial& t) {
  const TrialGroup& g = groups_.at(*t.group);
  if (const auto step = steps_.find(g.step); step != steps_.end()) {
    log_line("MPI step " + std::to_string(g.step) + " runs the hung trial: terminating it");
    step->second.process.signal_group(SIGTERM);
    step->second.ended_for_trial = true;
    step->second.kill_at = after(context_.clock, context_.options.kill_grace_s);
  }
}

void GroupBackend::begin_shutdown() {
  fill();  // waiting groups learn that nothing more comes
  step_terminate_at_ = after(context_.clock, context_.options.shutdown_grace_s);
}

// A group's attempts have no process of their own: only its steps are signalled.
void GroupBackend::tick(const std::vector<core::TrialId>& /*due*/) {
  const auto now = context_.clock.now();
  for (auto& [number, step] : steps_)
    if (step.kill_at && now >= *step.kill_at) {
      log_line("MPI step " + std::to_string(number) + " ignored SIGTERM; sending SIGKILL");
      step.process.signal_group(SIGKILL);
      step.kill_at.reset();
    }
  if (step_kill_at_ && now >= *step_kill_at_ && !steps_.empty()) {
    log_line("MPI step(s) ignored SIGTERM; sending SIGKILL");
    signal_steps(SIGKILL);
    step_kill_at_.reset();
  } else if (step_terminate_at_ && now >= *step_terminate_at_ && !steps_.empty()) {
    signal_steps(SIGTERM);
    step_terminate_at_.reset();
    step_kill_at_ = after(context_.clock, context_.options.kill_grace_s);
  }
}

}  // namespace slurmtune::runtime
