#pragma once
// Which nodes of the allocation are free, and how much of each. Every trial asks for
// the same shape (nodes x cpus x gpus per node); the ledger hands out disjoint
// resources, so each trial's job step (its own MPI world) never shares a core or a GPU
// with another trial's.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace slurmtune::core {

struct NodeCapacity {
  std::string name;
  std::int64_t cpus = 0;
  std::int64_t gpus = 0;
  /// The Slurm job it belongs to ("": the coordinator's own). A trial never spans jobs.
  std::string allocation = {};
};

/// What one trial needs on each of its nodes.
struct SlotRequest {
  std::int64_t nodes = 1;
  std::int64_t cpus_per_node = 1;
  std::int64_t gpus_per_node = 0;
};

class ResourceLedger {
 public:
  explicit ResourceLedger(std::vector<NodeCapacity> nodes);

  /// Throws InputError explaining why when no state of the allocation could ever hold
  /// `request` (too many nodes, a node too small): the study could never start.
  void check_fits(const SlotRequest& request) const;
  /// Reserves resources for one trial: node indices in ascending order, or nullopt when
  /// they are not free now. Best fit: the fullest nodes that still fit are used first,
  /// which keeps whole nodes free for multi-node trials. All of a trial's nodes belong
  /// to one allocation (the first, in the order nodes were added, that has room).
  std::optional<std::vector<std::size_t>> acquire(const SlotRequest& request);
  /// acquire() for a trial of one node on `node` alone (where its checkpoint is):
  /// nullopt when that node is not usable or has no room now.
  std::optional<std::vector<std::size_t>> acquire_on(std::size_t node, const SlotRequest& request);
  /// Returns what acquire() gave.
  void release(const std::vector<std::size_t>& nodes, const SlotRequest& request);
  /// Whether acquire() may place trials on `node` now (a worker step serves it); every
  /// node may at first. What runs there keeps its resources until released.
  void set_usable(std::size_t node, bool usable);

  /// A node of another allocation (`slurmtune join`): its index. It is usable at once.
  std::size_t add_node(NodeCapacity node);
  /// Whether one node of this size holds a trial's share of `request`.
  static bool holds(const NodeCapacity& node, const SlotRequest& request);

  /// How many trials of this shape fit in the empty allocation.
  std::size_t capacity(const SlotRequest& request) const;
  const std::vector<NodeCapacity>& nodes() const { return nodes_; }
  std::int64_t free_cpus(std::size_t node) const { return free_[node].cpus; }
  std::int64_t free_gpus(std::size_t node) const { return free_[node].gpus; }
  /// Comma-free Slurm hostlist of node indices ("n[1-2]").
  std::string hostlist(const std::vector<std::size_t>& nodes) const;

 private:
  /// Takes or gives back one trial's share of `node`, keeping by_free_ in step.
  void take(std::size_t node, const SlotRequest& request);
  void give(std::size_t node, const SlotRequest& request);
  void index(std::size_t node);
  void unindex(std::size_t node);

  std::vector<NodeCapacity> nodes_;
  std::vector<NodeCapacity> free_;
  std::vector<bool> usable_;
  // The usable nodes by free GPUs, then free CPUs and index: a one-node trial's best fit
  // is a lookup per GPU count, not a pass over every node (2,048 nodes a launch were 4 %
  // of the loop's time at a rung crossing, and a launch per freed slot is thousands a
  // second there).
  std::map<std::int64_t, std::set<std::pair<std::int64_t, std::size_t>>> by_free_;
};

}  // namespace slurmtune::core
