#include "runtime/attempts/trial_table.hpp"

#include <algorithm>

namespace slurmtune::runtime {

ActiveTrial& TrialTable::add(std::unique_ptr<ActiveTrial> trial) {
  const core::TrialId id = trial->trial;
  return *trials_.insert_or_assign(id, std::move(trial)).first->second;
}

ActiveTrial* TrialTable::find(core::TrialId trial) {
  const auto it = trials_.find(trial);
  return it == trials_.end() ? nullptr : it->second.get();
}

const ActiveTrial* TrialTable::find(core::TrialId trial) const {
  const auto it = trials_.find(trial);
  return it == trials_.end() ? nullptr : it->second.get();
}

std::vector<ConnectionId> TrialTable::erase(core::TrialId trial) {
  std::vector<ConnectionId> taken = take_connections(trial);
  trials_.erase(trial);
  return taken;
}

std::size_t TrialTable::connection_count(core::TrialId trial) const {
  return static_cast<std::size_t>(
      std::count_if(connections_.begin(), connections_.end(),
                    [trial](const auto& c) { return c.second == trial; }));
}

void TrialTable::bind(ConnectionId connection, core::TrialId trial) {
  connections_[connection] = trial;
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
  return trial;
}

std::vector<ConnectionId> TrialTable::take_connections(core::TrialId trial) {
  std::vector<ConnectionId> taken;
  for (auto c = connections_.begin(); c != connections_.end();) {
    if (c->second != trial) {
      ++c;
      continue;
    }
    taken.push_back(c->first);
    c = connections_.erase(c);
  }
  return taken;
}

bool TrialTable::messages_drained(ActiveTrial& trial, Clock::time_point now) {
  const bool open = std::any_of(connections_.begin(), connections_.end(),
                                [&trial](const auto& c) { return c.second == trial.trial; });
  if (!open) return true;
  if (!trial.exited_at) trial.exited_at = now;
  return now - *trial.exited_at >= std::chrono::seconds(2);
}

std::vector<std::pair<core::TrialId, double>> TrialTable::quiet_times(Clock::time_point now) const {
  std::vector<std::pair<core::TrialId, double>> quiet;
  for (const auto& [id, t] : trials_)
    quiet.emplace_back(id, std::chrono::duration<double>(now - t->last_sign).count());
  return quiet;
}

}  // namespace slurmtune::runtime
