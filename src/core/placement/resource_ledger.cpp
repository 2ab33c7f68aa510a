#include "core/placement/resource_ledger.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/placement/hostlist.hpp"

namespace slurmtune::core {

ResourceLedger::ResourceLedger(std::vector<NodeCapacity> nodes)
    : nodes_(std::move(nodes)), free_(nodes_), usable_(nodes_.size(), true) {
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    index(i);
}

void ResourceLedger::set_usable(std::size_t node, bool usable) {
  if (node >= usable_.size())
    throw UsageError("ResourceLedger::set_usable: no node " + std::to_string(node));
  if (usable_[node] == usable) return;
  if (!usable) unindex(node);
  usable_[node] = usable;
  if (usable) index(node);
}

void ResourceLedger::index(std::size_t node) {
  if (usable_[node]) by_free_[free_[node].gpus].emplace(free_[node].cpus, node);
}

void ResourceLedger::unindex(std::size_t node) {
  if (!usable_[node]) return;
  const auto level = by_free_.find(free_[node].gpus);
  if (level == by_free_.end()) return;
  level->second.erase({free_[node].cpus, node});
  if (level->second.empty()) by_free_.erase(level);
}

void ResourceLedger::take(std::size_t node, const SlotRequest& request) {
  unindex(node);
  free_[node].cpus -= request.cpus_per_node;
  free_[node].gpus -= request.gpus_per_node;
  index(node);
}

void ResourceLedger::give(std::size_t node, const SlotRequest& request) {
  unindex(node);
  free_[node].cpus += request.cpus_per_node;
  free_[node].gpus += request.gpus_per_node;
  index(node);
}

bool ResourceLedger::holds(const NodeCapacity& node, const SlotRequest& request) {
  return node.cpus >= request.cpus_per_node && node.gpus >= request.gpus_per_node;
}

std::size_t ResourceLedger::add_node(NodeCapacity node) {
  nodes_.push_back(node);
  free_.push_back(std::move(node));
  usable_.push_back(true);
  index(nodes_.size() - 1);
  return nodes_.size() - 1;
}

void ResourceLedger::check_fits(const SlotRequest& request) const {
  if (request.nodes > static_cast<std::int64_t>(nodes_.size()))
    throw InputError("[resources] nodes = " + std::to_string(request.nodes) +
                     " but the allocation has " + std::to_string(nodes_.size()) +
                     " node(s); ask for more nodes or lower nodes");
  if (capacity(request) == 0) {
    const auto biggest = std::max_element(
        nodes_.begin(), nodes_.end(), [](const auto& a, const auto& b) { return a.cpus < b.cpus; });
    throw InputError(
        "one trial needs " + std::to_string(request.cpus_per_node) + " CPU(s) and " +
        std::to_string(request.gpus_per_node) + " GPU(s) on each of " +
        std::to_string(request.nodes) + " node(s), but no " + std::to_string(request.nodes) +
        " node(s) of the allocation have that much (largest node: " +
        (biggest == nodes_.end() ? std::string("none")
                                 : biggest->name + " with " + std::to_string(biggest->cpus) +
                                       " CPU(s), " + std::to_string(biggest->gpus) + " GPU(s)") +
        "); lower [resources] ntasks_per_node, cpus_per_task or gpus_per_task");
  }
}

std::optional<std::vector<std::size_t>> ResourceLedger::acquire(const SlotRequest& request) {
  const auto wanted = static_cast<std::size_t>(request.nodes);
  // One node, the common case (every launch at 16,384 trials on 2,048 nodes): the same
  // best fit (the fewest free CPUs that hold it, the lowest index of equals) from the
  // index, without the list and the sort below.
  if (wanted == 1) {
    std::optional<std::pair<std::int64_t, std::size_t>> best;
    for (auto level = by_free_.lower_bound(request.gpus_per_node); level != by_free_.end();
         ++level) {
      const auto fit = level->second.lower_bound({request.cpus_per_node, 0});
      if (fit != level->second.end() && (!best || *fit < *best)) best = *fit;
    }
    if (!best) return std::nullopt;
    return acquire_on(best->second, request);
  }
  std::vector<std::size_t> fitting;
  for (std::size_t i = 0; i < free_.size(); ++i)
    if (usable_[i] && holds(free_[i], request)) fitting.push_back(i);
  if (fitting.size() < wanted) return std::nullopt;
  if (wanted > 1) {  // the first allocation with enough nodes that fit
    std::vector<std::size_t> same;
    for (const std::size_t first : fitting) {
      same.clear();
      for (const std::size_t i : fitting)
        if (nodes_[i].allocation == nodes_[first].allocation) same.push_back(i);
      if (same.size() >= wanted) break;
    }
    if (same.size() < wanted) return std::nullopt;
    fitting = same;
  }
  std::stable_sort(fitting.begin(), fitting.end(),
                   [this](std::size_t a, std::size_t b) { return free_[a].cpus < free_[b].cpus; });
  fitting.resize(wanted);
  std::sort(fitting.begin(), fitting.end());
  for (const std::size_t i : fitting)
    take(i, request);
  return fitting;
}

std::optional<std::vector<std::size_t>> ResourceLedger::acquire_on(std::size_t node,
                                                                   const SlotRequest& request) {
  if (request.nodes != 1)
    throw UsageError("ResourceLedger::acquire_on: a trial of " + std::to_string(request.nodes) +
                     " nodes");
  if (node >= free_.size() || !usable_[node] || !holds(free_[node], request)) return std::nullopt;
  take(node, request);
  return std::vector<std::size_t>{node};
}

void ResourceLedger::release(const std::vector<std::size_t>& nodes, const SlotRequest& request) {
  for (const std::size_t i : nodes) {
    if (i >= free_.size())
      throw UsageError("ResourceLedger::release: no node " + std::to_string(i));
    give(i, request);
    if (free_[i].cpus > nodes_[i].cpus || free_[i].gpus > nodes_[i].gpus)
      throw UsageError("ResourceLedger::release: " + nodes_[i].name + " released twice");
  }
}

std::size_t ResourceLedger::capacity(const SlotRequest& request) const {
  // Each node holds floor(cpus / need) trial slices (GPU-limited likewise); a trial takes
  // one slice on each of `nodes` distinct nodes. Greedy on the largest counts is exact.
  std::vector<std::int64_t> slices;
  for (const auto& node : nodes_) {
    std::int64_t n = request.cpus_per_node > 0 ? node.cpus / request.cpus_per_node : INT64_MAX;
    if (request.gpus_per_node > 0) n = std::min(n, node.gpus / request.gpus_per_node);
    if (n > 0) slices.push_back(std::min<std::int64_t>(n, 1 << 20));
  }
  const auto k = static_cast<std::size_t>(request.nodes);
  if (k == 1) return static_cast<std::size_t>(std::accumulate(slices.begin(), slices.end(), 0LL));
  std::size_t trials = 0;
  while (slices.size() >= k && k > 0) {
    std::partial_sort(slices.begin(), slices.begin() + static_cast<std::ptrdiff_t>(k), slices.end(),
                      std::greater<>());
    for (std::size_t i = 0; i < k; ++i)
      --slices[i];
    ++trials;
    std::erase(slices, 0);
  }
  return trials;
}

std::string ResourceLedger::hostlist(const std::vector<std::size_t>& nodes) const {
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (const std::size_t i : nodes)
    names.push_back(nodes_.at(i).name);
  return compress_hostlist(names);
}

}  // namespace slurmtune::core
