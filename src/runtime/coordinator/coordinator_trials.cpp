// What every launch backend's trials share (TrialHost): an attempt's registration (its
// folder, its checkpoint, the results file's record of its nodes), its environment, its
// end as the study controller and the results file see it, and the messages a running
// trial sends, whichever connection carries them.
#include <cmath>
#include <filesystem>

#include "core/number_text.hpp"
#include "runtime/attempts/active_trial.hpp"
#include "runtime/coordinator/coordinator.hpp"
#include "runtime/log.hpp"
#include "runtime/study_paths.hpp"
#include "store/study_writer.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;

ActiveTrial& Coordinator::register_trial(const core::TrialLaunch& launch,
                                         TrialResources resources) {
  pbt_.carry_out();  // its own clone must be in place before it starts
  const core::TrialId id = launch.trial;
  auto t = std::make_unique<ActiveTrial>();
  t->trial = id;
  t->attempt = launch.attempt;
  t->kind = launch.kind;
  t->dir = folders_.trial(id);
  t->checkpoint_dir = node_checkpoints_
                          ? node_checkpoints_->trial_folder(id, resources.nodes.front())
                          : folders_.checkpoints(id);
  t->stderr_path = t->dir + "/stderr.log";
  // Every launch its own credential (a pause ends the last). A new trial's first launch
  // finds its files made off the loop, as a rule, and so does a relaunch the backend
  // asked them for (LaunchFiles); the others make them here, under a number of their
  // own: the batch may be writing launch 1's file now.
  const bool first = launch.kind == core::TrialLaunch::Kind::Start;
  if (auto made =
          first ? launch_files_->take(id) : launch_files_->take_relaunch(id, launch.attempt)) {
    t->launch = made->launch;
    t->credential_file = std::move(made->credential_file);
    t->stderr_offset = made->stderr_offset;
  } else {
    // (A node's own disk is its agent's to make the folder on, LAUNCH: folders_ has no
    // checkpoint root then.)
    auto files = launch_files_->make_now(id, launch.attempt);
    t->launch = files.launch;
    t->credential_file = std::move(files.credential_file);
    t->stderr_offset = files.stderr_offset;
    if (first) launch_files_->count_made_on_loop();
  }
  if (first) launch_files_->keep_ahead(id + 1);
  // A path cleared by NodeCheckpoints: it was on a node's disk that is gone (logged).
  const auto checkpoint = study_.checkpoints.find(id);
  const bool saved = checkpoint != study_.checkpoints.end();
  if (saved && !checkpoint->second.path.empty() && launch.kind != core::TrialLaunch::Kind::Start) {
    const auto on_node = NodePath::parse(checkpoint->second.path);
    t->checkpoint = on_node ? on_node->path  // NodeCheckpoints placed it on that node
                            : (fs::path(study_dir_) / checkpoint->second.path).string();
    t->checkpoint_step = checkpoint->second.step;
  }
  if (!saved && launch.kind == core::TrialLaunch::Kind::Resume && controller_->last_step(id) > 0)
    log_line("trial " + std::to_string(id) + " resumes from scratch: it saved no checkpoint when " +
             "it paused at step " + core::format_double(controller_->last_step(id)) +
             " (a trial told to pause should save one: doc/protocol.md)");
  t->params_json = spec_.space.to_json(launch.config);
  t->placement = std::move(resources);
  t->started = t->last_sign = time_.now();
  if (const auto& limit = spec_.trial.time_limit_s)
    trials_.wake_at(id, t->started + steady_seconds(*limit));
  if (const auto& silence = spec_.trial.report_timeout_s)
    trials_.wake_at(id, t->started + steady_seconds(*silence));
  time_.attempt_started(id, controller_->last_step(id));
  study_.writer->set_nodes(id, t->placement.hostlist);
  return trials_.add(std::move(t));
}

std::map<std::string, std::string> Coordinator::trial_environment(const ActiveTrial& t) const {
  std::map<std::string, std::string> env = {
      {"SLURMTUNE_ADDR", address_},
      {"SLURMTUNE_TRIAL_ID", std::to_string(t.trial)},
      {"SLURMTUNE_TRIAL_DIR", t.dir},
      {"SLURMTUNE_CHECKPOINT_DIR", t.checkpoint_dir},
      {"SLURMTUNE_ATTEMPT", std::to_string(t.attempt)},
      {"SLURMTUNE_PARAMS", t.params_json},
      {"SLURMTUNE_STUDY", spec_.name},
      {"SLURMTUNE_CHECKPOINT", t.checkpoint},
      {"SLURMTUNE_CHECKPOINT_STEP",
       t.checkpoint_step ? core::format_double(*t.checkpoint_step) : ""}};
  if (!python_path_.empty()) env["PYTHONPATH"] = python_path_;
  // A worker step that starts it writes one of its own (derived from its credential).
  if (!t.credential_file.empty()) env["SLURMTUNE_TOKEN_FILE"] = t.credential_file;
  return env;
}

core::ExitMeaning Coordinator::end_trial(core::TrialId trial, bool clean,
                                         const std::string& error) {
  if (const ActiveTrial* t = trials_.find(trial); t && !t->credential_file.empty())
    credentials_->remove_attempt(trial, t->launch, files_);
  const core::ExitMeaning meaning = controller_->trial_exited(trial, clean, error);
  pbt_.carry_out();
  time_.attempt_ended(trial);
  pbt_.attempt_ended(trial);
  // Connections its ranks (or a process they left behind) still hold speak for nothing
  // now: closed, so they cannot pile up. A trial group's connection is its backend's and
  // lives on for the group's next trial.
  for (const ConnectionId id : trials_.erase(trial))
    if (!backend_->owns(id)) server_->close(id, "trial " + std::to_string(trial) + " has ended");
  return meaning;
}

std::optional<Reply> Coordinator::trial_message(ActiveTrial& t, ConnectionId id,
                                                protocol::MessageType type,
                                                const protocol::JsonObject& body) {
  switch (type) {
    case protocol::MessageType::Report:
      if (t.reporter != id)
        throw protocol::ProtocolError("only trial rank 0 reports; other ranks send ASK");
      t.last_sign = time_.now();
      return on_report(t, id, body);
    case protocol::MessageType::Heartbeat:
      t.last_sign = time_.now();
      return std::nullopt;
    case protocol::MessageType::Checkpoint:
      t.last_sign = time_.now();
      on_checkpoint(t, body);
      return std::nullopt;
    default:
      throw protocol::ProtocolError("a client may not send " + std::string(to_string(type)));
  }
}

void Coordinator::nothing_to_launch() {
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
  if (!trials_.empty() || controller_->shutting_down()) return;
  log_line(
      "allocation: nothing more reaches its next rung before the job ends; stopping with "
      "work left");
  controller_->begin_shutdown();
}

}  // namespace slurmtune::runtime
