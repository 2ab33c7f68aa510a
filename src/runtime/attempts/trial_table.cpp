#include "runtime/attempts/trial_table.hpp"

#include <algorithm>

namespace slurmtune::runtime {
namespace {

// An ended process's connections are closed by the kernel after its data; one that a
// process it left behind still holds is not waited for longer than this.
constexpr std::chrono::seconds kDrainWait{2};

}  // namespace

ActiveTrial& TrialTable::add(std::unique_ptr<ActiveTrial> trial) {
  const core::TrialId id = trial->trial;
  ActiveTrial& added = *trials_.insert_or_assign(id, std::move(trial)).first->second;
  if (id >= index_.size()) index_.resize(static_cast<std::size_t>(id) + 1, nullptr);
  index_[id] = &added;
  return added;
}

ActiveTrial* TrialTable::find(core::TrialId trial) {
  return trial < index_.size() ? index_[trial] : nullptr;
}

const ActiveTrial* TrialTable::find(core::TrialId trial) const {
  return trial < index_.size() ? index_[trial] : nullptr;
}

std::vector<ConnectionId> TrialTable::erase(core::TrialId trial) {
  std::vector<ConnectionId> taken = take_connections(trial);
  trials_.erase(trial);
  if (trial < index_.size()) index_[trial] = nullptr;
  return taken;
}

std::size_t TrialTable::connection_count(core::TrialId trial) const {
  const auto it = by_trial_.find(trial);
  return it == by_trial_.end() ? 0 : it->second.size();
}

void TrialTable::bind(ConnectionId connection, core::TrialId trial) {
  unbind(connection);
  connections_[connection] = trial;
  by_trial_[trial].insert(connection);
}

ActiveTrial* TrialTable::of_connection(ConnectionId connection) {
  const auto c = connections_.find(connection);
  return c == connections_.end() ? nullptr : find(c->second);
}

std::optional<core::TrialId> TrialTable::unbind(ConnectionId connection) {
  const auto c = connections_.find(connection);
  if (c == connections_.end()) return std::nullopt;
  const core::TrialId trial = c->second;
  connections_.erase(c);
  if (const auto bound = by_trial_.find(trial); bound != by_trial_.end()) {
    bound->second.erase(connection);
    if (bound->second.empty()) by_trial_.erase(bound);
  }
  return trial;
}

std::vector<ConnectionId> TrialTable::take_connections(core::TrialId trial) {
  const auto bound = by_trial_.find(trial);
  if (bound == by_trial_.end()) return {};
  std::vector<ConnectionId> taken(bound->second.begin(), bound->second.end());
  by_trial_.erase(bound);
  for (const ConnectionId connection : taken)
    connections_.erase(connection);
  return taken;
}

bool TrialTable::messages_drained(ActiveTrial& trial, Clock::time_point now) {
  if (connection_count(trial.trial) == 0) return true;
  if (!trial.exited_at) {
    trial.exited_at = now;
    wake_at(trial.trial, now + kDrainWait);
  }
  return now - *trial.exited_at >= kDrainWait;
}

std::vector<core::TrialId> TrialTable::take_due(Clock::time_point now) {
  timers_.compact([this](core::TrialId id) { return find(id) != nullptr; });
  auto due = timers_.take_due(now);
  std::erase_if(due, [this](core::TrialId id) { return find(id) == nullptr; });
  return due;
}

std::vector<std::pair<core::TrialId, double>> TrialTable::quiet_times(Clock::time_point now) const {
  std::vector<std::pair<core::TrialId, double>> quiet;
  for (const auto& [id, t] : trials_)
    quiet.emplace_back(id, std::chrono::duration<double>(now - t->last_sign).count());
  return quiet;
}

}  // namespace slurmtune::runtime
