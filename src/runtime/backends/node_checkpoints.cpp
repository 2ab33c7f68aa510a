#include "runtime/backends/node_checkpoints.hpp"

#include <algorithm>
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

void NodeCheckpoints::send_or_keep(const std::string& node, protocol::MessageType type,
                                   std::string payload) {
  if (const auto agent = agents_.find(node); agent != agents_.end())
    server_.send(agent->second, type, payload);
  else
    unsent_[node].emplace_back(type, std::move(payload));
}

bool NodeCheckpoints::serves(const std::string& node) {
  return node_index(node) && !lost_.contains(node);
}

void NodeCheckpoints::remove(const std::vector<core::CheckpointRemoval>& removals) {
  for (const auto& removal : removals) {
    const auto at = NodePath::parse(removal.path);
    if (!at) continue;  // a shared file: CheckpointRemover's own
    if (serves(at->node))
      send_or_keep(at->node, protocol::MessageType::Remove,
                   protocol::encode(protocol::Remove{removal.trial, {at->path}}));
    else
      log_line("trial " + std::to_string(removal.trial) + ": checkpoint " + removal.path +
               " not removed: its node " +
               (lost_.contains(at->node) ? "was lost" : "is not in this job"));
  }
}

void NodeCheckpoints::copy(const std::string& node, protocol::CopyCheckpoint request,
                           CopyDone done) {
  request.id = next_copy_++;
  if (!serves(node)) {
    done(protocol::CheckpointCopied{
        request.id,
        {},
        0,
        {},
        "its node " + node + (lost_.contains(node) ? " was lost" : " is not in this job")});
    return;
  }
  copies_.emplace(request.id, PendingCopy{node, std::move(done)});
  send_or_keep(node, protocol::MessageType::CopyCheckpoint, protocol::encode(request));
}

void NodeCheckpoints::copied(const std::string& node, const protocol::CheckpointCopied& reply) {
  const auto pending = copies_.find(reply.id);
  if (pending == copies_.end() || pending->second.node != node)
    throw protocol::ProtocolError("COPIED " + std::to_string(reply.id) +
                                  ": no such copy was asked of " + node);
  const CopyDone done = std::move(pending->second.done);
  copies_.erase(pending);
  done(reply);
}

void NodeCheckpoints::fail_copies_of(const std::string& node, const std::string& why) {
  std::vector<std::pair<std::uint64_t, CopyDone>> failed;
  for (auto it = copies_.begin(); it != copies_.end();)
    if (it->second.node == node) {
      failed.emplace_back(it->first, std::move(it->second.done));
      it = copies_.erase(it);
    } else {
      ++it;
    }
  for (const auto& [id, done] : failed)
    done(protocol::CheckpointCopied{id, {}, 0, {}, why});
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
    for (const auto& [type, payload] : unsent->second)
      server_.send(agent->second, type, payload);
    unsent = unsent_.erase(unsent);
  }
}

// Rare (a node failing, a joined job ending): the pass over every trial's checkpoint
// happens once per node lost, not per message.
void NodeCheckpoints::agent_lost(const std::string& name, core::StudyController& controller) {
  agents_.erase(name);
  lost_.insert(name);
  if (const auto unsent = unsent_.find(name); unsent != unsent_.end()) {
    const auto removals =
        std::count_if(unsent->second.begin(), unsent->second.end(),
                      [](const auto& m) { return m.first == protocol::MessageType::Remove; });
    if (removals > 0)
      log_line("node " + name + " lost: " + std::to_string(removals) +
               " checkpoint(s) the policy dropped there were not removed");
    unsent_.erase(unsent);
  }
  fail_copies_of(name, "its node " + name + " was lost");
  for (const auto& [trial, checkpoint] : checkpoints_)
    if (const auto at = NodePath::parse(checkpoint.path); at && at->node == name)
      forget(trial, "this session lost");
  if (const auto node = node_index(name)) let_waiting_go(*node, SIZE_MAX, controller);
}

}  // namespace slurmtune::runtime
