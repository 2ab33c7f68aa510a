#include "runtime/backends/process_backend.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <csignal>

#include "core/number_text.hpp"
#include "core/study/trial_command.hpp"
#include "runtime/backends/node_checkpoints.hpp"
#include "runtime/backends/run_options.hpp"
#include "runtime/log.hpp"
#include "runtime/worker/relay_tree.hpp"

namespace slurmtune::runtime {

ProcessBackend::ProcessBackend(const BackendContext& context, bool worker_steps)
    : context_(context),
      worker_steps_(worker_steps),
      rendezvous_(context.options.rendezvous_ports.value_or(default_rendezvous_ports()),
                  context.launcher.single_host(), context.trials_dir + "/scontrol.out",
                  context.launcher.node_names()),
      step_rate_(context.options.step_launch_rate),
      workers_(
          context_, [this](core::TrialId trial) { finish(trial); }, done_, step_cancels_) {}

std::string ProcessBackend::describe() const {
  return "; " + rendezvous_.describe();
}

void ProcessBackend::begin() {
  warn_of_connection_room();
  if (worker_steps_) workers_.launch_own_workers();
}

// Said at start, not found out at the 513th trial: whether the connections the study's
// concurrency needs fit the coordinator's descriptors. Node agents need one per node;
// otherwise every running trial's rank 0 holds one.
void ProcessBackend::warn_of_connection_room() const {
  const std::size_t room = context_.server.stats().max_authenticated;
  std::size_t need = trials_at_once(context_.launcher, context_.spec.resources);
  if (worker_steps_) {
    const std::size_t nodes = context_.launcher.node_names().size();
    const std::size_t fanout = relay_fanout_for(nodes, room, context_.options.relay_fanout);
    need = fanout > 1 ? (nodes + fanout - 1) / fanout : nodes;
  }
  if (need <= room) return;
  log_line(
      "warning: " + std::to_string(need) +
      (worker_steps_ ? " node agents or relays" : " trials at once") +
      " need as many connections, and the coordinator has room for " + std::to_string(room) +
      " (half its descriptor limit, or --max-connections): the others wait their turn" +
      (worker_steps_ ? "" : "; launch = \"worker\" carries a node's trials on one connection"));
}

void ProcessBackend::fill() {
  core::StudyController& controller = context_.controller;
  if (controller.shutting_down()) return;
  const auto& limit = context_.spec.resources.max_concurrent;
  const auto began = std::chrono::steady_clock::now();  // real time: the budget is the loop's
  const auto budget = context_.loop.behind() ? kFillBudgetBehind : kFillBudget;
  bool launched = false;  // at least one a turn: launches never starve
  more_to_fill_ = false;
  while (!limit ||
         static_cast<std::int64_t>(context_.trials.size() + relaunching_.size()) < *limit) {
    if (launched && std::chrono::steady_clock::now() - began >= budget) {
      more_to_fill_ = true;
      return;
    }
    auto placement = context_.launcher.reserve();
    if (!placement) break;
    const bool served = workers_.serves(placement->nodes.front());
    // Out of descriptors, a launch would fail its trial (its credential file cannot be
    // created); it waits a turn instead, until a connection or a file closes.
    const int needs = served ? kDescriptorsPerWorkerLaunch : kDescriptorsPerLaunch;
    if (!descriptors_.spare(needs)) {
      context_.launcher.release(*placement);
      // Nothing running holds any: nothing would ever close to make room.
      if (context_.trials.empty() && !workers_.waiting())
        throw Error(
            "no descriptors to spare for a launch even with no trial running: raise "
            "ulimit -n (the coordinator runs with its hard limit)");
      if (!waiting_for_descriptors_)
        log_line("launches wait: this process has no " + std::to_string(needs) +
                 " descriptors to spare (ulimit -n); they go on as connections close");
      waiting_for_descriptors_ = true;
      return;
    }
    if (waiting_for_descriptors_) log_line("launches go on: descriptors are free again");
    waiting_for_descriptors_ = false;
    // A job step (not a worker's child) waits for the step launch rate: a later turn.
    const bool step = !context_.launcher.single_host() && !served;
    if (step && !step_rate_.allows(std::chrono::steady_clock::now())) {
      context_.launcher.release(*placement);
      if (!told_step_rate_)
        log_line("launches wait for the step launch rate (" +
                 core::format_double(step_rate_.per_second()) +
                 " job steps a second, --step-launch-rate); said once");
      told_step_rate_ = true;
      return;  // not done: the next turn launches more
    }
    controller.stamp(context_.clock.unix_now());  // the start or resumption's recorded time
    auto launch = [&] {
      const auto suggesting = context_.stalls.measure(core::LoopWork::Suggestions);
      return controller.next_launch(context_.clock.elapsed_s(), context_.clock.fits_before_end());
    }();
    if (!launch) {
      context_.launcher.release(*placement);
      context_.host.nothing_to_launch();
      break;
    }
    if (auto* nodes = context_.node_checkpoints) {
      // A trial resuming from a checkpoint on a node's own disk runs on that node.
      placement = nodes->place(*launch, std::move(*placement), controller);
      if (!placement) continue;  // deferred until a slot there is free
    }
    if (step) step_rate_.take();
    launched = true;
    if (launch->kind != core::TrialLaunch::Kind::Start && context_.prepare_relaunch) {
      // Its files are made off the loop while its resources wait for it.
      const core::TrialId trial = launch->trial;
      relaunching_.insert_or_assign(trial, std::pair(*launch, std::move(*placement)));
      context_.prepare_relaunch(*launch, [this, trial] {
        const auto it = relaunching_.find(trial);
        if (it == relaunching_.end()) return;
        auto [ready, resources] = std::move(it->second);
        relaunching_.erase(it);
        start_trial(ready, std::move(resources));
      });
      continue;
    }
    start_trial(*launch, std::move(*placement));
  }
  // With every slot free and nothing to launch, nothing can happen any more (unless
  // worker steps have yet to connect and bring their nodes, or a launch waits for its
  // files).
  if (context_.trials.empty() && relaunching_.empty() && !workers_.waiting() &&
      !controller.launches_held())
    done_ = true;
}

void ProcessBackend::start_trial(const core::TrialLaunch& launch, TrialResources placement) {
  const core::StudySpec& spec = context_.spec;
  ActiveTrial& t = context_.host.register_trial(launch, std::move(placement));
  const core::TrialId id = t.trial;
  TrialProcessSpec process;
  process.trial = id;
  process.attempt = launch.attempt;
  process.argv = core::expand_command(spec.trial.command, spec.space, launch.config, id, t.dir);
  // Each rank of a multi-rank trial learns its RANK from srun or mpirun.
  if (spec.resources.ranks() > 1) process.argv = RendezvousAssigner::with_rank_exec(process.argv);
  process.env = context_.host.trial_environment(t);
  t.rendezvous = rendezvous_.assign(t.placement, spec.resources);
  if (t.rendezvous)
    process.env.insert(t.rendezvous->env.begin(), t.rendezvous->env.end());
  else
    log_line("trial " + std::to_string(id) + ": every port of the " + rendezvous_.describe() +
             " is taken on its first node; it gets no MASTER_ADDR/MASTER_PORT");
  if (context_.node_checkpoints) process.checkpoint_dir_to_make = t.checkpoint_dir;
  process.stdout_path = t.dir + "/stdout.log";
  process.stderr_path = t.stderr_path;
  // Its ranks each find their node's agent there (worker launch, several ranks).
  if (const auto& agents = workers_.agents_folder(); !agents.empty())
    process.env["SLURMTUNE_AGENTS"] = agents;
  try {
    t.process = workers_.serves(t.placement.nodes.front())
                    ? workers_.start(t, process)
                    : TrialProcess(context_.launcher.start(t.placement, process));
    if (const pid_t pid = t.process.local_pid(); pid > 0) trial_of_child_[pid] = id;
    workers_.admit(t, true);
  } catch (const Error& e) {
    context_.launcher.release(t.placement);
    if (auto* nodes = context_.node_checkpoints) nodes->released(t.placement, context_.controller);
    if (t.rendezvous) rendezvous_.release(*t.rendezvous);
    log_line("trial " + std::to_string(id) + ": " + e.what());
    context_.host.end_trial(id, false, e.what());
    return;
  }
  log_line("trial " + std::to_string(id) + " " + std::string(core::to_string(launch.kind)) +
           (launch.attempt ? " (attempt " + std::to_string(launch.attempt + 1) + ")" : "") +
           " on " + t.placement.hostlist + ": " + t.params_json);
}

void ProcessBackend::finish(core::TrialId trial) {
  ActiveTrial& t = *context_.trials.find(trial);
  trial_of_child_.erase(t.process.local_pid());
  const ExitStatus status = *t.process.status();
  const bool clean = status.success() && !t.bye_failed && t.fault.empty();
  std::string error;
  if (!clean) {
    error = t.fault.empty() ? "" : t.fault + "; ";
    error += t.bye_failed ? "trial reported failure: " + t.bye_error + "; " : "";
    error += status.describe();
    if (t.lost_connection && !status.success()) error += " after losing its connection";
    const std::string tail = t.stderr_tail();
    if (!tail.empty()) error += "\n" + tail;
  }
  context_.launcher.release(t.placement);
  if (auto* nodes = context_.node_checkpoints) nodes->released(t.placement, context_.controller);
  if (t.rendezvous) rendezvous_.release(*t.rendezvous);
  workers_.admit(t, false);
  context_.host.end_trial(trial, clean, error);
}

// One SIGCHLD may stand for many exits (signals coalesce), and with 8,000 trials as
// steps, polling every child on each one cost the loop 8,000 system calls a time (issue
// #62): the kernel says which child ended, and only that trial is polled (which reaps
// it). A child that is not a trial's (a worker step is reaped above) falls back to
// polling every trial, as before.
void ProcessBackend::reap() {
  workers_.reap();
  // An ended scancel first: left a zombie, it would be the child waitid names below, and
  // every trial would be polled for it.
  step_cancels_.poll();
  std::vector<core::TrialId> ended;
  const auto now = context_.clock.now();
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) break;
    const auto it = trial_of_child_.find(info.si_pid);
    ActiveTrial* t = it == trial_of_child_.end() ? nullptr : context_.trials.find(it->second);
    if (!t) {
      reap_every_trial(ended);
      break;
    }
    trial_of_child_.erase(it);
    t->process.poll();  // reaps it: the next waitid sees the next child that ended
    if (context_.trials.messages_drained(*t, now)) ended.push_back(t->trial);
  }
  std::sort(ended.begin(), ended.end());
  ended.erase(std::unique(ended.begin(), ended.end()), ended.end());
  for (const core::TrialId id : ended)
    finish(id);
}

void ProcessBackend::reap_every_trial(std::vector<core::TrialId>& ended) {
  const auto now = context_.clock.now();
  for (auto& [id, t] : context_.trials)
    if (t->process.poll() && context_.trials.messages_drained(*t, now)) ended.push_back(id);
}

// A trial's last messages (CHECKPOINT, BYE) may still be unread when its exit is reaped
// (epoll hands the SIGCHLD and the socket over together): the exit is classified once
// its connections have closed, or a moment later (TrialTable::messages_drained, which
// wakes the attempt up then).
void ProcessBackend::tick(const std::vector<core::TrialId>& due) {
  workers_.tick();
  step_cancels_.poll();
  if (auto* nodes = context_.node_checkpoints) nodes->send_waiting();
  const auto now = context_.clock.now();
  for (const core::TrialId id : due) {
    ActiveTrial* t = context_.trials.find(id);
    if (!t) continue;
    if (t->exited_at && context_.trials.messages_drained(*t, now))
      finish(id);
    else
      signal_due(*t, now);
  }
}

void ProcessBackend::trial_connection_closed(ActiveTrial& t) {
  if (t.process.poll() && context_.trials.messages_drained(t, context_.clock.now()))
    finish(t.trial);  // its exit waited for this
}

// SIGTERM when its stop's grace ran out, SIGKILL a kill grace later (schedule_stop).
void ProcessBackend::signal_due(ActiveTrial& t, std::chrono::steady_clock::time_point now) {
  if (t.kill_at && now >= *t.kill_at) {
    log_line("trial " + std::to_string(t.trial) + " ignored SIGTERM; sending SIGKILL");
    t.hard_kill(step_cancels_);
    t.kill_at.reset();
  } else if (t.terminate_at && now >= *t.terminate_at) {
    t.process.signal_group(SIGTERM);
    t.terminate_at.reset();
    t.kill_at = now + steady_seconds(context_.options.kill_grace_s);
    context_.trials.wake_at(t.trial, *t.kill_at);
  }
}

void ProcessBackend::stop(bool study_over) {
  // Removals that waited for an agent that connected this last turn, ahead of its end.
  if (auto* nodes = context_.node_checkpoints) nodes->send_waiting();
  workers_.stop(study_over);
  step_cancels_.finish();
  if (step_cancels_.asked() > 0)
    log_line("Slurm steps cancelled (scancel --signal=KILL, off the loop): " +
             std::to_string(step_cancels_.asked()));
}

void ProcessBackend::end_attempt(ActiveTrial& t) {
  schedule_stop(context_.trials, t, context_.clock.now(),
                0);  // SIGTERM now, SIGKILL after the kill grace
}

std::string ProcessBackend::on_hello(ConnectionId id, const protocol::HelloFrom& hello) {
  if (const auto* worker = std::get_if<protocol::WorkerHello>(&hello))
    return workers_.on_hello(id, *worker);
  if (const auto* joined = std::get_if<protocol::JoinedHello>(&hello))
    return workers_.on_hello(id, *joined);
  throw protocol::ProtocolError("a trial group connected, but [trial] mode is not mpi");
}

std::optional<Reply> ProcessBackend::on_message(ConnectionId id, protocol::MessageType type,
                                                const protocol::JsonObject& body) {
  return workers_.on_message(id, type, body);
}

void ProcessBackend::on_closed(ConnectionId id, const std::string& reason) {
  workers_.on_closed(id, reason);
}

}  // namespace slurmtune::runtime
