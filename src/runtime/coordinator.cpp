#include "runtime/coordinator.hpp"

#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <sstream>

#include "core/error.hpp"
#include "core/search/param_value.hpp"
#include "core/study/trial_command.hpp"
#include "core/text.hpp"
#include "runtime/active_trial.hpp"
#include "runtime/job_clock.hpp"
#include "runtime/log.hpp"
#include "runtime/secret.hpp"
#include "runtime/slurm_limits.hpp"
#include "runtime/study_paths.hpp"
#include "runtime/study_recorder.hpp"
#include "runtime/this_process.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;

double silent_after_s(const RunOptions& options, const core::StudySpec& spec) {
  if (const auto& timeout = spec.trial.report_timeout_s)
    return std::min(options.silent_after_s, *timeout / 2);
  return options.silent_after_s;
}

Coordinator::Coordinator(const core::StudySpec& spec, RunOptions options)
    : spec_(spec),
      options_(std::move(options)),
      study_dir_(fs::absolute(options_.output).parent_path().string()),
      trials_dir_(trials_dir_of(options_.output)),
      token_file_(token_file_of(options_.output)),
      python_path_(python_path_with_bundled()),
      pbt_(study_dir_, trials_dir_),
      progress_(options_.progress_interval_s, silent_after_s(options_, spec_)) {
  if (spec_.trial.command.empty() && !group_mode())
    throw InputError(spec_.path +
                     ": [trial] command is required by 'slurmtune run' (the "
                     "program each trial runs, e.g. [\"python3\", \"train.py\", \"--lr={lr}\"])");
  preflight();
  // The coordinator ends an attempt at time_limit_s itself; srun's own limit (whole
  // minutes) only catches a step the coordinator can no longer end.
  if (const auto& limit = spec_.trial.time_limit_s)
    options_.launch.step_time_limit_min =
        static_cast<std::int64_t>(std::ceil((*limit + options_.kill_grace_s) / 60.0));
  launcher_ = make_launcher(spec_.resources, options_.launch);
  rendezvous_ = std::make_unique<RendezvousAssigner>(
      options_.rendezvous_ports.value_or(default_rendezvous_ports()), launcher_->single_host(),
      trials_dir_ + "/scontrol.out");
  fs::create_directories(trials_dir_);
  fs::permissions(trials_dir_, fs::perms::owner_all);
  // A fresh token every session: processes of an earlier session cannot report into it.
  fs::remove(token_file_);
  const std::string token = generate_token();
  write_token_file(token_file_, token);

  study_ = open_study(spec_, options_.output, options_.allow_changes,
                      store::WriterOptions{options_.flush_interval_s, 1, false});
  recorder_ = std::make_unique<StudyRecorder>(*study_.writer, pending_exploits_);
  controller_ = std::make_unique<core::StudyController>(
      spec_, std::move(study_.scheduler), std::move(study_.suggester), *recorder_,
      study_.resumed ? &*study_.resumed : nullptr);
  settle_resumed_pbt();
  start_allocation_clock();

  signals_ = make_signal_fd({SIGCHLD, SIGTERM, SIGINT, SIGUSR1});
  std::signal(SIGPIPE, SIG_IGN);
  loop_.add(signals_.get(), EPOLLIN, [this](std::uint32_t) {
    signalfd_siginfo info{};
    while (::read(signals_.get(), &info, sizeof info) == sizeof info) {
      if (info.ssi_signo == SIGCHLD)
        reap_children();
      else
        on_shutdown_signal(static_cast<int>(info.ssi_signo));
    }
  });
  server_ = std::make_unique<ControlServer>(loop_, *this, token, options_.control);
  address_ = (options_.advertise_host.empty() ? host_name() : options_.advertise_host) + ":" +
             std::to_string(server_->port());

  log_line("study '" + spec_.name + "': " + (study_.resumed ? "resuming " : "writing ") +
           options_.output +
           (study_.resumed ? " (" + std::to_string(study_.reports_replayed) + " reports replayed)"
                           : ""));
  log_line(launcher_->describe() + (group_mode() ? "" : "; " + rendezvous_->describe()));
  log_line("control plane on " + address_ + ", token in " + token_file_);
  publish_address();
  warn_of_step_limit();
}

// A step per trial: Slurm's MaxStepCount per job may end the study before max_trials.
void Coordinator::warn_of_step_limit() const {
  if (launcher_->single_host() || group_mode() || worker_mode()) return;
  const auto max_steps = cluster_max_step_count(trials_dir_ + "/scontrol-config.out");
  if (!max_steps) return;
  if (const std::string warning = step_count_warning(spec_.max_trials, *max_steps);
      !warning.empty())
    log_line("warning: " + warning);
}

Coordinator::~Coordinator() {
  std::error_code ignored;  // the session is over: `slurmtune join` waits for the next
  fs::remove(address_file_of(options_.output), ignored);
}

// A command template whose program is missing would fail every trial; say so at once.
void Coordinator::preflight() const {
  const std::string& program =
      group_mode() ? spec_.trial.program.front() : spec_.trial.command.front();
  if (program.find('{') != std::string::npos || program.find('/') != std::string::npos) return;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (::access((fs::path(dir.empty() ? "." : dir) / program).c_str(), X_OK) == 0) return;
  throw InputError(spec_.path + ": [trial] command: program '" + program +
                   "' is not on PATH; give its full path or load its module first");
}

// The allocation's clock (doc/slurm.md): work that cannot reach its next rung before
// the job ends (less the margin the template's USR1 warning needs) is held for the
// requeued job instead of being started and thrown away.
void Coordinator::start_allocation_clock() {
  TimeLeft left{options_.time_left_s, "--time-left"};
  if (!left.seconds) left = slurm_time_left(environment_map(), trials_dir_ + "/squeue.out");
  if (!left.seconds) return;
  time_.set_end(*left.seconds, options_.end_margin_s, controller_->max_resource());
  log_line("allocation ends in " + core::format_double(std::round(*left.seconds)) + " s (" +
           left.source + "): work that cannot reach its next rung " +
           core::format_double(options_.end_margin_s) +
           " s before then is held for the next session");
}

void Coordinator::note_held_work() {
  if (!controller_->held_for_clock()) return;
  if (!clock_announced_) {
    clock_announced_ = true;
    const auto needed = time_.seconds_to_first_rung();
    log_line("allocation: " + core::format_double(std::round(*time_.usable_left_s())) +
             " s left before the end margin; work that needs more to reach its next rung (a "
             "new trial: ~" +
             core::format_double(std::round(needed ? *needed : 0)) +
             " s) is held for the next session");
  }
  if (!active_.empty() || controller_->shutting_down()) return;
  log_line(
      "allocation: nothing more reaches its next rung before the job ends; stopping with "
      "work left");
  controller_->begin_shutdown();
}

int Coordinator::run() {
  if (worker_mode()) launch_workers();
  fill_slots();
  while (!(active_.empty() && steps_.empty() && (controller_->shutting_down() || done_))) {
    loop_.run_once(100);
    tick();
  }
  const bool more = controller_->shutting_down() && controller_->more_work_left();
  stop_workers(!more || cancel_signal_ != 0);
  study_.writer->flush();
  progress_.print(true, *controller_, quiet_times());
  if (!more) return 0;
  if (cancel_signal_) {
    const int status = cancelled_exit_status(cancel_signal_);
    log_line("cancelled with work left: exit status " + std::to_string(status) +
             " (not a requeue); run the same command again to resume");
    return status;
  }
  log_line("stopped early with work left: exit status " + std::to_string(kMoreWorkLeft) +
           "; run the same command again to resume");
  return kMoreWorkLeft;
}

void Coordinator::tick() {
  server_->tick();
  expire_unconnected_workers();
  expire_joined_allocations();
  finish_drained();  // exits waiting for their last messages
  controller_->check_budget(time_.elapsed_s());
  carry_out_exploits();  // any the budget's halt decided (synchronous PBT)
  if (!controller_->halt_reason().empty() && !halt_announced_) {
    halt_announced_ = true;
    log_line(controller_->halt_reason() + ": stopping running trials");
    for (auto& [id, t] : active_)
      schedule_stop(*t, options_.stop_grace_s);
  }
  enforce_deadlines();
  study_.writer->flush_if_due();
  if (progress_.due()) progress_.print(false, *controller_, quiet_times());
  fill_slots();
}

void Coordinator::fill_slots() {
  if (group_mode()) return serve_groups();
  if (controller_->shutting_down()) return;
  const auto& limit = spec_.resources.max_concurrent;
  while (!limit || static_cast<std::int64_t>(active_.size()) < *limit) {
    auto placement = launcher_->reserve();
    if (!placement) break;
    auto launch = controller_->next_launch(time_.elapsed_s(), time_.fits_before_end());
    if (!launch) {
      launcher_->release(*placement);
      note_held_work();
      break;
    }
    start_trial(*launch, std::move(*placement));
  }
  // With every slot free and nothing to launch, nothing can happen any more (unless
  // worker steps have yet to connect and bring their nodes).
  if (active_.empty() && !waiting_for_workers()) done_ = true;
}

ActiveTrial& Coordinator::register_trial(const core::TrialLaunch& launch,
                                         TrialResources placement) {
  carry_out_exploits();  // its own clone must be in place before it starts
  const core::TrialId id = launch.trial;
  auto t = std::make_unique<ActiveTrial>();
  t->trial = id;
  t->attempt = launch.attempt;
  t->kind = launch.kind;
  t->dir = trials_dir_ + "/trial-" + std::to_string(id);
  t->stderr_path = t->dir + "/stderr.log";
  fs::create_directories(t->dir);
  t->stderr_offset = fs::exists(t->stderr_path) ? fs::file_size(t->stderr_path) : 0;
  const auto checkpoint = study_.checkpoints.find(id);
  if (checkpoint != study_.checkpoints.end() && launch.kind != core::TrialLaunch::Kind::Start) {
    t->checkpoint = (fs::path(study_dir_) / checkpoint->second.path).string();
    t->checkpoint_step = checkpoint->second.step;
  }
  t->params_json = spec_.space.to_json(launch.config);
  t->placement = std::move(placement);
  t->started = t->last_sign = Clock::now();
  time_.attempt_started(id, controller_->last_step(id));
  return *active_.emplace(id, std::move(t)).first->second;
}

std::map<std::string, std::string> Coordinator::trial_environment(ActiveTrial& t) {
  std::map<std::string, std::string> env = {
      {"SLURMTUNE_ADDR", address_},
      {"SLURMTUNE_TOKEN_FILE", token_file_},
      {"SLURMTUNE_TRIAL_ID", std::to_string(t.trial)},
      {"SLURMTUNE_TRIAL_DIR", t.dir},
      {"SLURMTUNE_ATTEMPT", std::to_string(t.attempt)},
      {"SLURMTUNE_PARAMS", t.params_json},
      {"SLURMTUNE_STUDY", spec_.name},
      {"SLURMTUNE_CHECKPOINT", t.checkpoint},
      {"SLURMTUNE_CHECKPOINT_STEP",
       t.checkpoint_step ? core::format_double(*t.checkpoint_step) : ""}};
  if (!python_path_.empty()) env["PYTHONPATH"] = python_path_;
  t.rendezvous = rendezvous_->assign(t.placement, spec_.resources);
  if (t.rendezvous)
    env.insert(t.rendezvous->env.begin(), t.rendezvous->env.end());
  else
    log_line("trial " + std::to_string(t.trial) + ": every port of the " + rendezvous_->describe() +
             " is taken on its first node; it gets no MASTER_ADDR/MASTER_PORT");
  return env;
}

void Coordinator::start_trial(const core::TrialLaunch& launch, TrialResources placement) {
  ActiveTrial& t = register_trial(launch, std::move(placement));
  const core::TrialId id = t.trial;
  TrialProcessSpec process;
  process.trial = id;
  process.attempt = launch.attempt;
  process.argv = core::expand_command(spec_.trial.command, spec_.space, launch.config, id, t.dir);
  // Each rank of a multi-rank trial learns its RANK from srun or mpirun.
  if (spec_.resources.ranks() > 1) process.argv = RendezvousAssigner::with_rank_exec(process.argv);
  process.env = trial_environment(t);
  process.stdout_path = t.dir + "/stdout.log";
  process.stderr_path = t.stderr_path;
  try {
    t.process = worker_of_node_.contains(t.placement.nodes.front())
                    ? start_on_worker(t, process)
                    : TrialProcess(launcher_->start(t.placement, process));
  } catch (const Error& e) {
    launcher_->release(t.placement);
    if (t.rendezvous) rendezvous_->release(*t.rendezvous);
    active_.erase(id);
    log_line("trial " + std::to_string(id) + ": " + e.what());
    controller_->trial_exited(id, false, e.what());
    return;
  }
  study_.writer->set_nodes(id, t.placement.hostlist);
  log_line("trial " + std::to_string(id) + " " + std::string(core::to_string(launch.kind)) +
           (launch.attempt ? " (attempt " + std::to_string(launch.attempt + 1) + ")" : "") +
           " on " + t.placement.hostlist + ": " + t.params_json);
}

void Coordinator::reap_children() {
  std::vector<int> ended_steps;
  for (auto& [number, step] : steps_)
    if (step.process.poll()) ended_steps.push_back(number);
  for (const int number : ended_steps)
    step_ended(number);
  reap_workers();
  std::vector<core::TrialId> ended;
  for (auto& [id, t] : active_)
    if (!t->group && t->process.poll() && messages_drained(*t)) ended.push_back(id);
  for (const core::TrialId id : ended)
    finish_trial(id);
}

// A trial's last messages (CHECKPOINT, BYE) may still be unread when its exit is reaped
// (epoll hands the SIGCHLD and the socket over together): the exit is classified once
// its connections have closed, which the kernel does at exit after the data, or a
// moment later (a process the trial left behind may hold them open).
void Coordinator::finish_drained() {
  std::vector<core::TrialId> ended;
  for (auto& [id, t] : active_)
    if (t->exited_at && messages_drained(*t)) ended.push_back(id);
  for (const core::TrialId id : ended)
    finish_trial(id);
}

bool Coordinator::messages_drained(ActiveTrial& t) {
  const bool open = std::any_of(connections_.begin(), connections_.end(),
                                [&t](const auto& c) { return c.second == t.trial; });
  if (!open) return true;
  if (!t.exited_at) t.exited_at = Clock::now();
  return Clock::now() - *t.exited_at >= std::chrono::seconds(2);
}

void Coordinator::finish_trial(core::TrialId id) {
  const auto it = active_.find(id);
  ActiveTrial& t = *it->second;
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
  controller_->trial_exited(id, clean, error);
  carry_out_exploits();
  time_.attempt_ended(id);
  launcher_->release(t.placement);
  if (t.rendezvous) rendezvous_->release(*t.rendezvous);
  cloned_checkpoint_.erase(id);
  for (auto c = connections_.begin(); c != connections_.end();)
    c = c->second == id ? connections_.erase(c) : std::next(c);
  active_.erase(it);
}

void Coordinator::schedule_stop(ActiveTrial& t, double grace_s) {
  const auto at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(grace_s));
  if (!t.terminate_at || at < *t.terminate_at) t.terminate_at = at;
}

// [trial] time_limit_s and report_timeout_s: an attempt past either is ended and fails
// (retried up to max_failures). Only attempts still told to continue: one told to stop
// or pause is already on its way out under the stop grace.
void Coordinator::enforce_trial_limits() {
  if (controller_->shutting_down()) return;
  const auto now = Clock::now();
  const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  const auto& limit = spec_.trial.time_limit_s;
  const auto& silence = spec_.trial.report_timeout_s;
  for (auto& [id, t] : active_) {
    if (!t->fault.empty() || controller_->instruction(id) != core::Instruction::Continue) continue;
    if (limit && seconds(now - t->started) >= *limit)
      end_attempt(*t, "time limit of " + core::format_double(*limit) +
                          " s exceeded ([trial] time_limit_s)");
    else if (silence && seconds(now - t->last_sign) >= *silence)
      end_attempt(*t, silence_message(*t, *silence));
  }
}

std::string Coordinator::silence_message(const ActiveTrial& t, double silence_s) const {
  std::string why = "no report or heartbeat for " + core::format_double(silence_s) + " s ";
  const bool never = t.last_sign == t.started;
  why += never ? "after its launch" : "after its last report";
  why += " ([trial] report_timeout_s): hung?";
  // Ranks that never met leave a distributed trial silent from its start.
  if (never && t.rendezvous && spec_.resources.ranks() > 1)
    why += " Its ranks may not have met at MASTER_ADDR=" + t.rendezvous->host +
           " MASTER_PORT=" + std::to_string(t.rendezvous->port) + ".";
  return why;
}

void Coordinator::end_attempt(ActiveTrial& t, const std::string& why) {
  t.fault = why;
  log_line("trial " + std::to_string(t.trial) + ": " + why + "; ending the attempt");
  if (!t.group) return schedule_stop(t, 0);  // SIGTERM now, SIGKILL after the kill grace
  // A trial group cannot leave its step's collectives alone: its step goes (the other
  // groups' trials resume from their checkpoints in the relaunched step).
  const TrialGroup& g = groups_.at(*t.group);
  if (const auto step = steps_.find(g.step); step != steps_.end()) {
    log_line("MPI step " + std::to_string(g.step) + " runs the hung trial: terminating it");
    step->second.process.signal_group(SIGTERM);
    step->second.ended_for_trial = true;
    step->second.kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(options_.kill_grace_s));
  }
}

void Coordinator::enforce_deadlines() {
  enforce_trial_limits();
  const auto now = Clock::now();
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
    step_kill_at_ = now + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(options_.kill_grace_s));
  }
  for (auto& [id, t] : active_) {
    if (t->kill_at && now >= *t->kill_at) {
      log_line("trial " + std::to_string(id) + " ignored SIGTERM; sending SIGKILL");
      t->hard_kill("scancel");
      t->kill_at.reset();
    } else if (t->terminate_at && now >= *t->terminate_at) {
      t->process.signal_group(SIGTERM);
      t->terminate_at.reset();
      t->kill_at = now + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(options_.kill_grace_s));
    }
  }
}

// Under `scancel` Slurm signals every process of the batch step, and the sbatch
// template forwards the same signal: one event arrives twice within moments. It counts
// once, so the second copy does not cut the trials' checkpoint grace short.
void Coordinator::on_shutdown_signal(int signal) {
  const auto now = Clock::now();
  const bool echo = last_signal_ && last_signal_->first == signal &&
                    now - last_signal_->second < std::chrono::seconds(2);
  last_signal_ = {signal, now};
  if (signal == SIGTERM || signal == SIGINT) cancel_signal_ = signal;
  if (!echo) begin_shutdown(signal);
}

void Coordinator::begin_shutdown(int signal) {
  ++shutdown_signals_;
  const char* name = sigabbrev_np(signal);
  if (shutdown_signals_ > 1) {
    log_line(std::string("SIG") + (name ? name : "?") + " again: terminating running trials now");
    for (auto& [id, t] : active_)
      schedule_stop(*t, 0);
    return;
  }
  log_line(std::string("SIG") + (name ? name : "?") +
           (signal == SIGUSR1 ? " (checkpoint and requeue)" : " (cancel)") +
           ": no further launches; " + std::to_string(active_.size()) +
           " running trial(s) will checkpoint and stop within " +
           core::format_double(options_.shutdown_grace_s) + " s");
  controller_->begin_shutdown();
  for (auto& [id, t] : active_)
    schedule_stop(*t, options_.shutdown_grace_s);
  if (group_mode()) {
    serve_groups();  // waiting groups learn that nothing more comes
    step_terminate_at_ =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(options_.shutdown_grace_s));
  }
  study_.writer->flush();
}

std::vector<std::pair<core::TrialId, double>> Coordinator::quiet_times() const {
  const auto now = Clock::now();
  std::vector<std::pair<core::TrialId, double>> quiet;
  for (const auto& [id, t] : active_)
    quiet.emplace_back(id, std::chrono::duration<double>(now - t->last_sign).count());
  return quiet;
}

}  // namespace slurmtune::runtime
