#include "runtime/backends/node_checkpoints.hpp"

#include <filesystem>
#include <utility>

#include "protocol/session_messages.hpp"
#include "protocol/worker_messages.hpp"
#include "runtime/log.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;

std::optional<std::string> node_local_record(const std::string& named,
                                             const std::string& trial_folder,
                                             const std::string& node) {
  const fs::path given(named);
  if (!given.is_absolute()) return std::nullopt;
  fs::path path = given.lexically_normal();
  if (path.filename().empty()) path = path.parent_path();  // "ckpt/" names the folder ckpt
  if (!path_strictly_within(path, fs::path(trial_folder))) return std::nullopt;
  return NodePath{node, path.string()}.recorded();
}

std::string worker_welcome(const std::string& node, const std::string& allocation,
                           const NodeCheckpoints* checkpoints) {
  protocol::WorkerWelcome welcome{node, allocation};
  if (checkpoints) {
    welcome.checkpoint_folder = checkpoints->folder();
    welcome.study = checkpoints->results_file();
  }
  return protocol::encode(welcome);
}

NodeCheckpoints::NodeCheckpoints(std::string folder, std::string results_file,
                                 Checkpoints& checkpoints, Launcher& launcher,
                                 ControlServer& server)
    : folder_(std::move(folder)),
      results_file_(std::move(results_file)),
      checkpoints_(checkpoints),
      launcher_(launcher),
      server_(server) {}

std::string NodeCheckpoints::trial_folder(core::TrialId trial, std::size_t node) const {
  return trial_dir_in(node_folder(folder_, launcher_.node_capacity(node).name), trial);
}

// Joined jobs add nodes as they come: a name not met yet is looked up again, once.
std::optional<std::size_t> NodeCheckpoints::node_index(const std::string& name) {
  if (const auto it = node_of_name_.find(name); it != node_of_name_.end()) return it->second;
  const auto names = launcher_.node_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    node_of_name_.emplace(names[i], i);
  const auto it = node_of_name_.find(name);
  return it == node_of_name_.end() ? std::nullopt : std::optional(it->second);
}

void NodeCheckpoints::forget(core::TrialId trial, const std::string& why) {
  auto& checkpoint = checkpoints_.at(trial);
  log_line("trial " + std::to_string(trial) + " resumes from scratch: its checkpoint " +
           checkpoint.path + " is on the own disk of a node that " + why);
  checkpoint.path.clear();  // register_trial hands it none, and says nothing more
}

std::optional<TrialResources> NodeCheckpoints::place(core::TrialLaunch& launch,
                                                     TrialResources placement,
                                                     core::StudyController& controller) {
  if (launch.kind == core::TrialLaunch::Kind::Start) return placement;
  const auto saved = checkpoints_.find(launch.trial);
  if (saved == checkpoints_.end()) return placement;
  const auto at = NodePath::parse(saved->second.path);
  if (!at) return placement;
  const auto node = node_index(at->node);
  if (!node || lost_.contains(at->node)) {
    forget(launch.trial, node ? "this session lost" : "is not in this job");
    return placement;
  }
  if (placement.nodes.front() == *node) return placement;
  launcher_.release(placement);
  if (auto there = launcher_.reserve_on(*node)) return there;
  log_line("trial " + std::to_string(launch.trial) + " waits for a slot on " + at->node +
           ", whose own disk holds its checkpoint");
  waiting_[*node].push_back(launch.trial);
  controller.defer_launch(std::move(launch));
  return std::nullopt;
}

void NodeCheckpoints::let_waiting_go(std::size_t node, std::size_t how_many,
                                     core::StudyController& controller) {
  const auto waiting = waiting_.find(node);
  if (waiting == waiting_.end()) return;
  for (; how_many > 0 && !waiting->second.empty(); --how_many) {
    controller.release_launch(waiting->second.front());
    waiting->second.pop_front();
  }
  if (waiting->second.empty()) waiting_.erase(waiting);
}

void NodeCheckpoints::released(const TrialResources& placement, core::StudyController& controller) {
  for (const std::size_t node : placement.nodes)
    let_waiting_go(node, 1, controller);
}

void NodeCheckpoints::send(ConnectionId agent, core::TrialId trial, const std::string& path) {
  server_.send(agent, protocol::MessageType::Remove,
               protocol::encode(protocol::Remove{trial, {path}}));
}

void NodeCheckpoints::remove(const std::vector<core::CheckpointRemoval>& removals) {
  for (const auto& removal : removals) {
    const auto at = NodePath::parse(removal.path);
    if (!at) continue;  // a shared file: CheckpointRemover's own
    if (const auto agent = agents_.find(at->node); agent != agents_.end())
      send(agent->second, removal.trial, at->path);
    else if (node_index(at->node) && !lost_.contains(at->node))
      unsent_[at->node].emplace_back(removal.trial, at->path);
    else
      log_line("trial " + std::to_string(removal.trial) + ": checkpoint " + removal.path +
               " not removed: its node " +
               (lost_.contains(at->node) ? "was lost" : "is not in this job"));
  }
}

void NodeCheckpoints::agent_connected(const std::string& name, ConnectionId connection,
                                      core::StudyController& controller) {
  agents_[name] = connection;
  lost_.erase(name);
  // Trials that waited for this node before it could take any: each tries again.
  if (const auto node = node_index(name)) let_waiting_go(*node, SIZE_MAX, controller);
}

void NodeCheckpoints::send_waiting() {
  for (auto unsent = unsent_.begin(); unsent != unsent_.end();) {
    const auto agent = agents_.find(unsent->first);
    if (agent == agents_.end()) {
      ++unsent;
      continue;
    }
    for (const auto& [trial, path] : unsent->second)
      send(agent->second, trial, path);
    unsent = unsent_.erase(unsent);
  }
}

// Rare (a node failing, a joined job ending): the pass over every trial's checkpoint
// happens once per node lost, not per message.
void NodeCheckpoints::agent_lost(const std::string& name, core::StudyController& controller) {
  agents_.erase(name);
  lost_.insert(name);
  if (const auto unsent = unsent_.find(name); unsent != unsent_.end()) {
    log_line("node " + name + " lost: " + std::to_string(unsent->second.size()) +
             " checkpoint(s) the policy dropped there were not removed");
    unsent_.erase(unsent);
  }
  for (const auto& [trial, checkpoint] : checkpoints_)
    if (const auto at = NodePath::parse(checkpoint.path); at && at->node == name)
      forget(trial, "this session lost");
  if (const auto node = node_index(name)) let_waiting_go(*node, SIZE_MAX, controller);
}

}  // namespace slurmtune::runtime
