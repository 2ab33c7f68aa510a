// [trial] mode = "mpi": one MPI step runs the user's program over the whole allocation;
// slurmtune::run_trials inside it splits the ranks into per-trial groups, and each
// group's rank 0 connects here, asks for work (NEXT), gets a trial (ASSIGN), reports
// like any trial, and says how it ended (TRIAL_END). Groups run trials back to back:
// no process start-up between trials. A crashing rank ends the whole step (one
// MPI_COMM_WORLD): its groups' trials fail (and are retried) and the step is relaunched.
#include <filesystem>

#include "core/param_value.hpp"
#include "runtime/active_trial.hpp"
#include "runtime/coordinator.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;

std::string Coordinator::trial_shape() const {
  const auto& r = spec_.resources;
  if (r.gpus_per_task > 0) {
    const std::int64_t ranks = r.ranks_per_trial ? *r.ranks_per_trial : r.nodes * r.ntasks_per_node;
    return "gpus:" + std::to_string(ranks) + ":" + std::to_string(r.ntasks_per_node);
  }
  if (r.ranks_per_trial) return "ranks:" + std::to_string(*r.ranks_per_trial);
  return "nodes:" + std::to_string(r.nodes);
}

void Coordinator::launch_step() {
  ++step_launches_;
  step_groups_ = 0;
  step_failing_ = false;
  SpawnRequest request;
  request.argv = launcher_->whole_step(spec_.trial.program);
  request.env = {{"SLURMTUNE_ADDR", address_},
                 {"SLURMTUNE_TOKEN_FILE", token_file_},
                 {"SLURMTUNE_STUDY", spec_.name},
                 {"SLURMTUNE_TRIAL_SHAPE", trial_shape()}};
  const std::string stem = trials_dir_ + "/step-" + std::to_string(step_launches_);
  request.stdout_path = stem + ".out";
  request.stderr_path = stem + ".err";
  step_ = ChildProcess::spawn(request);
  std::string line = "MPI step " + std::to_string(step_launches_) + " (" + trial_shape() + "):";
  for (const auto& arg : request.argv)
    line += " " + arg;
  log_line(line);
}

std::string Coordinator::on_group_hello(ConnectionId id, const core::JsonObject& hello) {
  TrialGroup g;
  const auto number = [&](const char* key) {
    const auto it = hello.find(key);
    if (it == hello.end() || !it->second.is_number())
      throw ProtocolError(std::string("HELLO of a group: '") + key + "' must be a number");
    return static_cast<int>(std::get<double>(it->second.data));
  };
  g.index = number("group");
  g.ranks = number("ranks");
  if (const auto nodes = hello.find("nodes"); nodes != hello.end() && nodes->second.is_string())
    g.nodes = std::get<std::string>(nodes->second.data);
  log_line("trial group " + std::to_string(g.index) + " ready: " + std::to_string(g.ranks) +
           " rank(s) on " + g.nodes);
  groups_.emplace(id, g);
  ++step_groups_;
  return "{\"group\": " + std::to_string(g.index) + "}";
}

std::string Coordinator::assignment(const ActiveTrial& t) const {
  return "{\"trial\": " + std::to_string(t.trial) + ", \"attempt\": " + std::to_string(t.attempt) +
         ", \"params\": " + t.params_json + ", \"trial_dir\": " + core::json_quote(t.dir) +
         ", \"checkpoint\": " + (t.checkpoint.empty() ? "null" : core::json_quote(t.checkpoint)) +
         "}";
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
      const auto status = body.find("status");
      const bool ok = status != body.end() && status->second.is_string() &&
                      std::get<std::string>(status->second.data) == "completed";
      const auto error = body.find("error");
      end_group_trial(g, ok,
                      error != body.end() && error->second.is_string()
                          ? std::get<std::string>(error->second.data)
                          : std::string());
      return std::nullopt;
    }
    case MessageType::Report:
    case MessageType::Checkpoint: {
      if (!g.trial) throw ProtocolError(std::string(to_string(type)) + " without a trial");
      ActiveTrial& t = *active_.at(*g.trial);
      if (type == MessageType::Report) return on_report(t, id, body);
      on_checkpoint(t, body);
      return std::nullopt;
    }
    default:
      throw ProtocolError("a trial group may not send " + std::string(to_string(type)));
  }
}

void Coordinator::serve_groups() {
  if (!step_.running() && !step_launches_ && !controller_->shutting_down()) launch_step();
  // A vanished group means its step is going down (one MPI_COMM_WORLD): the other groups
  // of that step get nothing more, the relaunched step takes over.
  if (step_failing_) return;
  const bool stopping = controller_->shutting_down() || done_;
  for (auto& [id, g] : groups_) {
    if (!g.waiting) continue;
    std::optional<core::TrialLaunch> launch;
    if (!stopping) launch = controller_->next_launch(elapsed_s());
    if (!launch) continue;
    ActiveTrial& t = register_trial(*launch, Placement{{}, g.nodes});
    t.group = id;
    t.reporter = id;
    connections_[id] = t.trial;
    g.trial = t.trial;
    g.waiting = false;
    study_.writer->set_nodes(t.trial, g.nodes);
    log_line("trial " + std::to_string(t.trial) + " " + std::string(core::to_string(launch->kind)) +
             " in group " + std::to_string(g.index) + " (" + g.nodes + "): " + t.params_json);
    server_->send(id, MessageType::Assign, assignment(t));
  }
  // Every group idle and nothing to hand out: the study is over; tell the waiting groups.
  const bool any_waiting = std::any_of(groups_.begin(), groups_.end(),
                                       [](const auto& entry) { return entry.second.waiting; });
  if (any_waiting && active_.empty()) {
    done_ = true;
    for (auto& [id, g] : groups_) {
      if (!g.waiting) continue;
      g.waiting = false;
      server_->send(id, MessageType::Assign, "{\"done\": true}");
    }
  }
}

void Coordinator::end_group_trial(TrialGroup& g, bool ok, const std::string& error) {
  const core::TrialId id = *g.trial;
  g.trial.reset();
  const auto meaning = controller_->trial_exited(id, ok, error);
  if (!ok && meaning != core::ExitMeaning::Retried && meaning != core::ExitMeaning::Ended)
    log_line("trial " + std::to_string(id) + " left unfinished: " + error);
  connections_.erase(std::find_if(connections_.begin(), connections_.end(),
                                  [id](const auto& c) { return c.second == id; }));
  active_.erase(id);
}

void Coordinator::step_ended() {
  const std::string status = step_.status()->describe();
  std::string failures;
  for (auto& [id, g] : groups_)
    if (g.trial)
      end_group_trial(g, false,
                      "the MPI step ended (" + status + "); see " + trials_dir_ + "/step-" +
                          std::to_string(step_launches_) + ".err");
  const bool any_group = step_groups_ > 0;
  groups_.clear();
  if (done_ || controller_->shutting_down()) {
    log_line("MPI step " + std::to_string(step_launches_) + " ended: " + status);
    return;
  }
  if (!any_group)
    throw Error("the MPI step ended (" + status + ") before any trial group connected; see " +
                trials_dir_ + "/step-" + std::to_string(step_launches_) + ".err");
  if (step_launches_ > options_.max_step_restarts)
    throw Error("the MPI step failed " + std::to_string(step_launches_) +
                " times; giving up (see " + trials_dir_ + "/step-*.err)");
  log_line("MPI step " + std::to_string(step_launches_) + " ended (" + status +
           ") with work left: relaunching it");
  launch_step();
}

}  // namespace slurmtune::runtime
