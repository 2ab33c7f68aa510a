#include "core/study/checkpoint_retention.hpp"

#include <algorithm>
#include <iterator>

namespace slurmtune::core {
namespace {

// True when `inner` is `outer` or lies inside it, comparing '/'-separated components of
// paths as /checkpoints keeps them (lexically normal, relative to the same folder).
bool within(std::string_view inner, std::string_view outer) {
  return inner.starts_with(outer) && (inner.size() == outer.size() || inner[outer.size()] == '/');
}

}  // namespace

const std::vector<std::string>& checkpoint_removal_reason_names() {
  static const std::vector<std::string> names = {"superseded", "ended", "outranked"};
  return names;
}

CheckpointRetention::CheckpointRetention(CheckpointPolicy policy, Mode mode)
    : policy_(policy), mode_(mode) {}

std::vector<CheckpointRemoval> CheckpointRetention::saved(TrialId trial, double step,
                                                          const std::string& path,
                                                          std::uint64_t bytes) {
  Checkpoints& own = live_[trial];
  std::erase_if(own, [&](const Saved& s) { return s.path == path; });
  own.push_back({step, path, bytes});
  std::vector<CheckpointRemoval> out;
  if (!policy_.keep_per_trial) return out;
  const auto keep = static_cast<std::size_t>(*policy_.keep_per_trial);
  if (own.size() <= keep) return out;
  Checkpoints older(own.begin(), own.end() - static_cast<std::ptrdiff_t>(keep));
  own.erase(own.begin(), own.end() - static_cast<std::ptrdiff_t>(keep));
  remove_all(trial, older, own, CheckpointRemoval::Reason::Superseded, out);
  return out;
}

std::vector<CheckpointRemoval> CheckpointRetention::ended(TrialId trial,
                                                          std::optional<double> best) {
  std::vector<CheckpointRemoval> out;
  const auto found = live_.find(trial);
  Checkpoints own = found == live_.end() ? Checkpoints{} : std::move(found->second);
  if (found != live_.end()) live_.erase(found);
  if (!policy_.keep_ended || own.empty()) return out;
  if (!best) {
    remove_all(trial, own, {}, CheckpointRemoval::Reason::Ended, out);
    return out;
  }
  const double ranked = mode_ == Mode::Min ? *best : -*best;
  best_ended_.emplace(std::pair{ranked, trial}, std::move(own));
  if (best_ended_.size() <= static_cast<std::size_t>(*policy_.keep_ended)) return out;
  const auto worst = std::prev(best_ended_.end());
  const TrialId pushed_out = worst->first.second;
  remove_all(
      pushed_out, worst->second, {},
      pushed_out == trial ? CheckpointRemoval::Reason::Ended : CheckpointRemoval::Reason::Outranked,
      out);
  best_ended_.erase(worst);
  return out;
}

std::vector<std::string> CheckpointRetention::kept(TrialId trial) const {
  std::vector<std::string> out;
  const auto add = [&out](const Checkpoints& from) {
    for (const auto& s : from)
      out.push_back(s.path);
  };
  if (const auto it = live_.find(trial); it != live_.end()) add(it->second);
  for (const auto& [key, checkpoints] : best_ended_)
    if (key.second == trial) add(checkpoints);
  return out;
}

void CheckpointRetention::remove_all(TrialId trial, const Checkpoints& from,
                                     const Checkpoints& keep, CheckpointRemoval::Reason reason,
                                     std::vector<CheckpointRemoval>& out) {
  for (const auto& s : from) {
    const bool needed = std::any_of(keep.begin(), keep.end(), [&](const Saved& k) {
      return within(k.path, s.path) || within(s.path, k.path);
    });
    if (!needed) out.push_back({trial, s.step, s.path, s.bytes, reason});
  }
}

}  // namespace slurmtune::core
