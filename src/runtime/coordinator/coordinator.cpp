#include "runtime/coordinator/coordinator.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "core/search/sampler_spec.hpp"
#include "core/search/suggestions_ahead.hpp"
#include "core/study/prior_start.hpp"
#include "core/text.hpp"
#include "protocol/wire/secret.hpp"
#include "runtime/attempts/active_trial.hpp"
#include "runtime/attempts/stderr_cap.hpp"
#include "runtime/checkpoint_files.hpp"
#include "runtime/control/sampler_thread.hpp"
#include "runtime/coordinator/checkpoint_path.hpp"
#include "runtime/launch/job_clock.hpp"
#include "runtime/log.hpp"
#include "runtime/recording/study_recorder.hpp"
#include "runtime/study_paths.hpp"
#include "runtime/this_process.hpp"
#include "runtime/worker/relay_tree.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;

double silent_after_s(const RunOptions& options, const core::StudySpec& spec) {
  if (const auto& timeout = spec.trial.report_timeout_s)
    return std::min(options.silent_after_s, *timeout / 2);
  return options.silent_after_s;
}

namespace {

// What a resume with room for more trials did to the trials dropped when the study ended.
void log_reopened(const OpenedStudy& study) {
  if (!study.reopened.empty()) {
    std::vector<std::string> ids;
    for (const core::TrialId trial : study.reopened)
      ids.push_back(std::to_string(trial));
    log_line("reopened " + std::to_string(study.reopened.size()) +
             " trial(s) dropped when the study ended (" + core::join_names(ids) +
             "): the study has room for more trials, and they wait at their rungs again");
  }
  if (study.left_dropped > 0)
    log_line(std::to_string(study.left_dropped) +
             " trial(s) dropped when the study ended stay ended: this results file's schema " +
             "predates reopening (schema 8); start a new study to have them reconsidered");
}

// What the control plane held at most: the descriptors a study of this shape needs, and
// how much of it the node agents carried.
// `flush_thread_s`: the results file's flush thread's CPU time (nullopt: none ran).
void log_control_plane(const ControlServerStats& s, std::optional<double> flush_thread_s) {
  log_line("control plane: at most " + std::to_string(s.peak_open) + " connection(s) at once, of " +
           std::to_string(s.max_authenticated) + " allowed; " + std::to_string(s.peak_channels) +
           " carried by node agents at once (" + std::to_string(s.routed) + " frames); " +
           std::to_string(s.over_capacity) + " told to retry for room");
  // Its own, not its children's (the trials it started, the sruns).
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  const auto tenths = [](double value) { return core::format_double(std::round(value * 10) / 10); };
  const auto seconds = [&](const timeval& t) {
    return tenths(static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6);
  };
  // Whose: this thread is the loop's. Where the loop shares a core with the flush thread
  // and the helpers, their time is the loop's lost.
  std::string threads = "the loop's thread " + tenths(loop_thread_cpu_seconds()) + " s";
  if (flush_thread_s)
    threads += ", the results file's flush thread " + tenths(*flush_thread_s) + " s";
  log_line("coordinator: CPU " + seconds(self.ru_utime) + " s user, " + seconds(self.ru_stime) +
           " s system (" + threads + "); peak memory " + std::to_string(self.ru_maxrss / 1024) +
           " MiB");
}

// suggest_ahead: the sampler's calls run on a thread of their own from here on (a
// resume's replay made them inline, the suggestion it made ahead included).
void run_sampler_on_thread(core::Suggester& suggester, EventLoop& loop) {
  if (auto* ahead = dynamic_cast<core::SuggestionsAhead*>(&suggester))
    ahead->run_calls(std::make_unique<SamplerThread>(loop, ahead->sampler()));
}

// [checkpoints] node_local: with node agents, the nodes' own disks are theirs to work
// on (NodeCheckpoints: true). Where every trial runs on this host (the local launcher)
// its own disk is this one's, and the folder serves as any checkpoint folder does.
bool settle_node_local(const core::StudySpec& spec, const Launcher& launcher, TrialFolders& folders,
                       const std::string& results_file) {
  if (!spec.checkpoints.node_local) return false;
  if (!launcher.single_host()) return true;
  folders.checkpoint_root =
      claim_checkpoint_folder(node_folder(spec.checkpoints.folder, launcher.node_names().front()),
                              fs::path(spec.path).parent_path(), results_file);
  return false;
}

// How long the next turn may wait for events: 0 while launches wait, less than turn_ms
// when a commit that decisions wait for comes due sooner.
int turn_timeout_ms(bool more_to_fill, const store::StudyWriter& writer, int turn_ms) {
  if (more_to_fill) return 0;
  if (const auto commit = writer.commit_due_in_s())
    return std::min(turn_ms, static_cast<int>(std::ceil(*commit * 1000)));
  return turn_ms;
}

}  // namespace

Coordinator::Coordinator(core::StudySpec spec, RunOptions options, CoordinatorSeams seams)
    : spec_(std::move(spec)),
      options_(std::move(options)),
      study_dir_(fs::absolute(options_.output).parent_path().string()),
      trials_dir_(trials_dir_of(options_.output)),
      token_file_(token_file_of(options_.output)),
      folders_{trials_dir_,
               spec_.checkpoints.folder.empty() || spec_.checkpoints.node_local
                   ? std::string()
                   : claim_checkpoint_folder(spec_.checkpoints.folder,
                                             fs::path(spec_.path).parent_path(), options_.output)},
      python_path_(python_path_with_bundled()),
      confined_checkpoints_(study_dir_),
      files_(loop_),
      pbt_(study_, trials_, study_dir_, folders_, files_, stalls_,
           [this](ConnectionId to, Reply reply, bool write_ahead) {
             if (write_ahead) {
               hold_for_next_commit(durable_replies_, *study_.writer, to, std::move(reply));
             } else {
               seams_.deliver(to, reply);
             }
           }),
      seams_(std::move(seams)),
      time_(seams_.now ? seams_.now : SteadyNow(std::chrono::steady_clock::now)),
      progress_(options_.progress_interval_s, silent_after_s(options_, spec_)) {
  check_launchable(spec_);
  // The coordinator ends an attempt at time_limit_s itself; srun's own limit (whole
  // minutes) only catches a step the coordinator can no longer end.
  if (const auto& limit = spec_.trial.time_limit_s)
    options_.launch.step_time_limit_min =
        static_cast<std::int64_t>(std::ceil((*limit + options_.kill_grace_s) / 60.0));
  launcher_ = make_launcher(spec_.resources, options_.launch);
  // A prior's first wave follows the trials run at once; the results file records it.
  core::resolve_prior_start(spec_, trials_at_once(*launcher_, spec_.resources));
  node_local_ = settle_node_local(spec_, *launcher_, folders_, options_.output);
  fs::create_directories(trials_dir_);
  fs::permissions(trials_dir_, fs::perms::owner_all);
  // A fresh secret every session: processes of an earlier session cannot report into it.
  // Its file exists only for `slurmtune join` (--accept-joins): every trial runs as the
  // study's user and could read it, and with it derive any credential.
  fs::remove(token_file_);
  const std::string token = protocol::generate_token();
  if (options_.accept_joins) protocol::write_token_file(token_file_, token);
  credentials_ = std::make_unique<CredentialFiles>(credentials_dir_of(options_.output), token);

  study_ =
      open_study(spec_, options_.output, options_.allow_changes,
                 store::WriterOptions{options_.flush_interval_s, 1, false, store::kSchemaVersion,
                                      true, options_.snapshot_interval_s,
                                      store::WriterOptions{}.min_commit_gap_s, true});
  run_sampler_on_thread(*study_.suggester, loop_);
  recorder_ = std::make_unique<StudyRecorder>(*study_.writer, pbt_.pending());
  if (study_.retention) {
    remover_ = std::make_unique<CheckpointRemover>(std::move(*study_.retention), *study_.writer,
                                                   files_, study_dir_, folders_);
    recorder_->set_checkpoint_remover(remover_.get());
    pbt_.set_checkpoint_remover(remover_.get());
  }
  controller_ = std::make_unique<core::StudyController>(
      spec_, std::move(study_.scheduler), std::move(study_.suggester), *recorder_,
      study_.resumed ? &*study_.resumed : nullptr);
  controller_->set_fail_fast(options_.fail_fast);
  // A worker step derives the credentials of the attempts it starts: when every trial
  // starts on one, no launch writes a credential file on the study's file system.
  const bool worker_steps = uses_worker_steps(spec_, *launcher_, trials_dir_);
  launch_files_ = std::make_unique<LaunchFiles>(
      folders_,
      workers_start_every_trial(spec_, *launcher_, worker_steps) ? std::nullopt
                                                                 : std::optional(*credentials_),
      files_, core::trial_cap(spec_), launcher_->capacity());
  launch_files_->keep_ahead(controller_->counts().started);
  files_.drain();  // the first wave's files, before anything runs
  start_allocation_clock();

  signals_ = make_signal_fd({SIGCHLD, SIGTERM, SIGINT, SIGUSR1});
  std::signal(SIGPIPE, SIG_IGN);
  loop_.add(signals_.get(), EPOLLIN, [this](std::uint32_t) {
    signalfd_siginfo info{};
    while (::read(signals_.get(), &info, sizeof info) == sizeof info) {
      if (info.ssi_signo == SIGCHLD) {
        const auto exits = stalls_.measure(core::LoopWork::Exits);
        backend_->reap();
      } else {
        on_shutdown_signal(static_cast<int>(info.ssi_signo));
      }
    }
  });
  // The flush thread says when a group commit is durable; the decisions held for it go.
  commits_ = protocol::UniqueFd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!commits_) protocol::throw_errno("cannot create the eventfd for group commits");
  loop_.add(commits_.get(), EPOLLIN, [this](std::uint32_t) {
    std::uint64_t count = 0;
    while (::read(commits_.get(), &count, sizeof count) == sizeof count) {
    }
    release_durable_replies();
    const auto results = stalls_.measure(core::LoopWork::Results);
    study_.writer->flush_if_due();  // the next commit, if decisions wait for one, starts now
  });
  study_.writer->on_durable([fd = commits_.get()](const store::StudyWriter::DurableCommit&) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto ignored = ::write(fd, &one, sizeof one);
  });
  const std::string descriptors = raise_descriptor_limit();  // before the caps are sized
  server_ = std::make_unique<ControlServer>(loop_, *this, token, options_.control);
  if (!seams_.deliver)  // held decisions go out through the control server
    seams_.deliver = [this](ConnectionId to, const Reply& reply) {
      server_->send(to, reply.type, reply.payload);
    };
  address_ = (options_.advertise_host.empty() ? host_name() : options_.advertise_host) + ":" +
             std::to_string(server_->port());
  if (node_local_) {
    node_checkpoints_ = std::make_unique<NodeCheckpoints>(
        spec_.checkpoints.folder, fs::weakly_canonical(fs::absolute(options_.output)).string(),
        study_.checkpoints, *launcher_, *server_);
    if (remover_)
      remover_->send_node_removals(
          [nodes = node_checkpoints_.get()](const auto& removals) { nodes->remove(removals); });
  }
  if (remover_) remover_->remove(study_.removals_due);  // a policy tighter than the last session's
  if (node_checkpoints_)
    pbt_.copy_on_nodes(
        [nodes = node_checkpoints_.get()](const std::string& node, auto request, auto done) {
          nodes->copy(node, std::move(request), std::move(done));
        });
  pbt_.begin(*controller_);  // a resume's copies: on nodes' disks, sent once their agents connect
  const BackendContext context{
      spec_,
      options_,
      *controller_,
      *server_,
      loop_,
      stalls_,
      *launcher_,
      time_,
      trials_,
      *this,
      address_,
      *credentials_,
      trials_dir_,
      python_path_,
      node_checkpoints_.get(),
      [this](const core::TrialLaunch& launch, std::function<void()> ready) {
        launch_files_->make_relaunch(launch.trial, launch.attempt, std::move(ready));
      }};
  backend_ = seams_.backend ? seams_.backend(context) : make_launch_backend(context, worker_steps);

  log_line("study '" + spec_.name + "': " + (study_.resumed ? "resuming " : "writing ") +
           options_.output +
           (study_.resumed ? " (" + std::to_string(study_.reports_replayed) + " reports replayed" +
                                 (study_.snapshot_seq ? " after the decision snapshot at seq " +
                                                            std::to_string(*study_.snapshot_seq)
                                                      : std::string()) +
                                 ")"
                           : ""));
  if (!study_.log_applied.empty()) log_line(study_.log_applied);
  if (!study_.snapshot_note.empty())
    log_line("decision snapshots not used: " + study_.snapshot_note);
  log_reopened(study_);
  if (!descriptors.empty()) log_line(descriptors);
  log_line(launcher_->describe() + backend_->describe());
  log_line("control plane on " + address_ +
           (options_.accept_joins ? ", secret for joined jobs in " + token_file_
                                  : ", no joined jobs (--accept-joins)") +
           ", credentials in " + credentials_dir_of(options_.output) +
           (launch_files_->writes_credentials()
                ? ""
                : " for the workers, which make their attempts' on their nodes"));
  publish_address(address_file_of(options_.output), address_);  // 0600, whole
}

Coordinator::~Coordinator() {
  // The flush thread must not signal a descriptor that is closed (or reused) after this.
  try {
    study_.writer->on_durable({});
  } catch (const std::exception& e) {
    log_line(std::string("results file: ") + e.what());
  }
  std::error_code ignored;  // the session is over: `slurmtune join` waits for the next
  fs::remove(address_file_of(options_.output), ignored);
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

int Coordinator::run() {
  stalls_.forget_so_far();  // what the constructor did (a resume's PBT copies) stalled nothing
  backend_->begin();
  backend_->fill();
  while (!(trials_.empty() && !backend_->busy() &&
           (controller_->shutting_down() || backend_->done()))) {
    const LogBatch turn_log;  // the turn's lines in one write (log.hpp)
    loop_.run_once(turn_timeout_ms(backend_->more_to_fill(), *study_.writer, seams_.turn_ms),
                   kEventBudget);
    stalls_.periodic_begins(loop_.woke_at());
    tick();
    stalls_.turn_ends();
  }
  const bool more = controller_->shutting_down() && controller_->more_work_left();
  backend_->stop(!more || cancel_signal_ != 0);
  pbt_.finish();  // the copies still running, and their rows
  launch_files_->finish(controller_->counts().started);
  log_line("new trials' files: " + std::to_string(launch_files_->made_ahead()) +
           " launches found them made off the loop, " +
           std::to_string(launch_files_->made_on_loop()) + " made them on it; relaunches: " +
           std::to_string(launch_files_->relaunches_made_off_loop()) + " made off the loop");
  study_.writer->set_loop_figures(stalls_.figures());
  study_.writer->flush();
  release_durable_replies();
  progress_.print(true, *controller_, trials_.quiet_times(time_.now()));
  log_control_plane(server_->stats(), study_.writer->flush_thread_cpu_s());
  if (const auto wal = study_.writer->write_ahead_summary()) log_line(*wal);
  log_line(stalls_.summary());
  log_line(stalls_.work_summary());
  if (const std::string held = durable_replies_.summary(); !held.empty()) log_line(held);
  if (!more) return outcome_status();
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

// A study that ends without a trial run to its end, or halted by the fail-fast rule,
// failed: the job says so (exit 1) rather than exiting 0 with nothing learnt.
int Coordinator::outcome_status() const {
  const auto& counts = controller_->counts();
  if (controller_->failed_fast()) {
    log_line("the study failed: " + controller_->halt_reason());
    return 1;
  }
  // A halt by the time budget or the metric threshold ends the study on purpose.
  const bool ran_its_course = controller_->halt_reason().empty();
  const bool all_failed = counts.failed > 0 && counts.completed == 0 && counts.stopped == 0;
  if (counts.completed > 0 || (!ran_its_course && !all_failed)) return 0;
  log_line("the study failed: no trial completed (" + std::to_string(counts.failed) + " failed, " +
           std::to_string(counts.stopped) +
           " stopped); the failures' causes are in the trials' stderr.log");
  return 1;
}

void Coordinator::tick() {
  // The periodic work runs every 100 ms, not every turn: with thousands of trials
  // reporting, a turn comes every few microseconds. It looks only at what is due (hello
  // timeouts oldest first, attempts the trial table wakes up): walks over every
  // connection or trial took most of the coordinator's CPU at 16,384 trials (issue #62).
  const bool periodic = time_.now() - last_periodic_ >= kPeriodicInterval;
  if (periodic) {
    last_periodic_ = time_.now();
    server_->tick();
    study_.writer->set_loop_figures(stalls_.figures());  // for the next commit row
  }
  controller_->check_budget(time_.elapsed_s());
  pbt_.carry_out();  // any the budget's halt decided (synchronous PBT)
  if (!controller_->halt_reason().empty() && !halt_announced_) {
    halt_announced_ = true;
    log_line(controller_->halt_reason() + ": stopping running trials");
    for (auto& [id, t] : trials_)
      schedule_stop(trials_, *t, time_.now(), options_.stop_grace_s);
  }
  if (periodic) {
    auto due = trials_.take_due(time_.now());
    enforce_trial_limits(due);
    const auto ended = trials_.take_due(time_.now());  // stops the limits just scheduled
    due.insert(due.end(), ended.begin(), ended.end());
    backend_->tick(due);
  }
  if (time_.now() - stderr_checked_ >= std::chrono::seconds(1)) {
    stderr_checked_ = time_.now();
    stderr_caps_.check(trials_, files_);
  }
  {
    const auto results = stalls_.measure(core::LoopWork::Results);
    study_.writer->flush_if_due();
  }
  release_durable_replies();
  if (progress_.due())
    progress_.print(false, *controller_, trials_.quiet_times(time_.now()), stalls_.take_window());
  const auto launches = stalls_.measure(core::LoopWork::Launches);
  backend_->fill();
}

void Coordinator::release_durable_replies() {
  durable_replies_.release(study_.writer->durable_ticket(), seams_.deliver);
}

// [trial] time_limit_s and report_timeout_s: an attempt past either is ended and fails
// (retried up to max_failures). Only attempts still told to continue: one told to stop
// or pause is already on its way out under the stop grace. Each attempt is looked at
// when the trial table wakes it up (register_trial asks for its limits); one not yet
// silent asks again for the moment it would be.
void Coordinator::enforce_trial_limits(const std::vector<core::TrialId>& due) {
  if (controller_->shutting_down()) return;
  const auto now = time_.now();
  const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  const auto& limit = spec_.trial.time_limit_s;
  const auto& silence = spec_.trial.report_timeout_s;
  for (const core::TrialId id : due) {
    ActiveTrial* t = trials_.find(id);
    if (!t || !t->fault.empty() || controller_->instruction(id) != core::Instruction::Continue)
      continue;
    if (limit && seconds(now - t->started) >= *limit)
      end_attempt(*t, "time limit of " + core::format_double(*limit) +
                          " s exceeded ([trial] time_limit_s)");
    else if (silence && seconds(now - t->last_sign) >= *silence)
      end_attempt(*t, silence_message(*t, *silence));
    else if (silence)
      trials_.wake_at(id, t->last_sign + steady_seconds(*silence));
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
  backend_->end_attempt(t);
}

// Under `scancel` Slurm signals every process of the batch step, and the sbatch
// template forwards the same signal: one event arrives twice within moments. It counts
// once, so the second copy does not cut the trials' checkpoint grace short.
void Coordinator::on_shutdown_signal(int signal) {
  const auto now = time_.now();
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
    for (auto& [id, t] : trials_)
      schedule_stop(trials_, *t, time_.now(), 0);
    return;
  }
  log_line(std::string("SIG") + (name ? name : "?") +
           (signal == SIGUSR1 ? " (checkpoint and requeue)" : " (cancel)") +
           ": no further launches; " + std::to_string(trials_.size()) +
           " running trial(s) will checkpoint and stop within " +
           core::format_double(options_.shutdown_grace_s) + " s");
  controller_->begin_shutdown();
  for (auto& [id, t] : trials_)
    schedule_stop(trials_, *t, time_.now(), options_.shutdown_grace_s);
  backend_->begin_shutdown();
  study_.writer->flush();
}

}  // namespace slurmtune::runtime
