#pragma once
// An insert-only multiset with rank queries in O(log n): a B+ tree whose inner nodes
// carry the number of keys below each child. Scheduler rungs only ever gain values, so
// there is no erase. Wide nodes (64 keys) keep the tree 4 levels deep at a million keys,
// which is what makes a decision cost a handful of cache misses rather than ~20 (a
// binary tree) or a scan of every trial (Ray Tune, Optuna).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/error.hpp"

namespace slurmtune::core {

template <class Key, class Less = std::less<Key>>
class OrderStatisticTree {
 public:
  OrderStatisticTree() { leaves_.emplace_back(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  /// Inserts `key` after any equal keys.
  void insert(const Key& key) {
    if (auto split = insert_into(root_, height_, key)) {
      Inner root;
      root.n = 2;
      root.child[0] = root_;
      root.count[0] = size_ - split->count;  // size_ not yet incremented: see below
      root.child[1] = split->node;
      root.count[1] = split->count;
      root.low[1] = split->low;
      root.count[0] += 1;
      root_ = static_cast<std::uint32_t>(inners_.size());
      inners_.push_back(root);
      ++height_;
    }
    ++size_;
  }

  /// The key of rank k (0-based, ascending); k < size().
  const Key& kth(std::size_t k) const {
    if (k >= size_) throw UsageError("OrderStatisticTree::kth: rank out of range");
    std::uint32_t node = root_;
    for (int level = height_; level > 0; --level) {
      const Inner& in = inners_[node];
      std::uint32_t i = 0;
      while (k >= in.count[i])
        k -= in.count[i++];
      node = in.child[i];
    }
    return leaves_[node].keys[k];
  }

  /// Number of keys strictly less than `key` (the position of its lower bound).
  std::size_t count_less(const Key& key) const {
    return rank(key, [this](const Key& a, const Key& b) { return less_(a, b); });
  }

  /// Number of keys less than or equal to `key` (the position of its upper bound).
  std::size_t count_less_equal(const Key& key) const {
    return rank(key, [this](const Key& a, const Key& b) { return !less_(b, a); });
  }

  /// Every key, ascending.
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(size_);
    append_keys(root_, height_, out);
    return out;
  }

  // A snapshot (core/state_archive.hpp) holds the keys; the tree read back answers every
  // query as the one written did, whatever shape its nodes take.
  template <class Archive>
  void save(Archive& archive) const {
    archive(keys());
  }
  template <class Archive>
  void load(Archive& archive) {
    std::vector<Key> keys;
    archive(keys);
    *this = OrderStatisticTree();
    for (const Key& key : keys)
      insert(key);
  }

 private:
  static constexpr std::uint32_t kLeafCapacity = 64;
  static constexpr std::uint32_t kInnerCapacity = 64;

  struct Leaf {
    std::uint32_t n = 0;
    std::array<Key, kLeafCapacity> keys{};
  };
  // Child i holds keys in [low[i], low[i+1]]; low[0] is the node's own lower bound and
  // is only read when the node is split.
  struct Inner {
    std::uint32_t n = 0;
    std::array<std::uint32_t, kInnerCapacity> child{};
    std::array<std::size_t, kInnerCapacity> count{};
    std::array<Key, kInnerCapacity> low{};
  };
  struct Split {
    Key low;             // smallest key of the new right sibling
    std::uint32_t node;  // index of the new right sibling
    std::size_t count;   // keys in the new right sibling
  };

  // Index of the child whose range admits `key` under `before(low, key)`.
  template <class Before>
  static std::uint32_t route(const Inner& in, const Key& key, Before before) {
    std::uint32_t lo = 1, hi = in.n;  // first child i >= 1 with !before(low[i], key)
    while (lo < hi) {
      const std::uint32_t mid = (lo + hi) / 2;
      if (before(in.low[mid], key))
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo - 1;
  }

  void append_keys(std::uint32_t node, int level, std::vector<Key>& out) const {
    if (level == 0) {
      const Leaf& leaf = leaves_[node];
      out.insert(out.end(), leaf.keys.begin(), leaf.keys.begin() + leaf.n);
      return;
    }
    const Inner& in = inners_[node];
    for (std::uint32_t i = 0; i < in.n; ++i)
      append_keys(in.child[i], level - 1, out);
  }

  template <class Before>
  std::size_t rank(const Key& key, Before before) const {
    std::size_t below = 0;
    std::uint32_t node = root_;
    for (int level = height_; level > 0; --level) {
      const Inner& in = inners_[node];
      const std::uint32_t i = route(in, key, before);
      for (std::uint32_t j = 0; j < i; ++j)
        below += in.count[j];
      node = in.child[i];
    }
    const Leaf& leaf = leaves_[node];
    std::uint32_t lo = 0, hi = leaf.n;
    while (lo < hi) {
      const std::uint32_t mid = (lo + hi) / 2;
      if (before(leaf.keys[mid], key))
        lo = mid + 1;
      else
        hi = mid;
    }
    return below + lo;
  }

  std::optional<Split> insert_into(std::uint32_t node, int level, const Key& key) {
    if (level == 0) return insert_into_leaf(node, key);
    const auto upper = [this](const Key& low, const Key& k) { return !less_(k, low); };
    const std::uint32_t i = route(inners_[node], key, upper);
    ++inners_[node].count[i];
    auto split = insert_into(inners_[node].child[i], level - 1, key);
    if (!split) return std::nullopt;
    inners_[node].count[i] -= split->count;
    return add_child(node, i + 1, *split);
  }

  std::optional<Split> insert_into_leaf(std::uint32_t node, const Key& key) {
    std::optional<Split> split;
    std::uint32_t target = node;
    if (leaves_[node].n == kLeafCapacity) {
      const auto right = static_cast<std::uint32_t>(leaves_.size());
      leaves_.emplace_back();  // may reallocate: index, never hold references across it
      Leaf& left = leaves_[node];
      Leaf& fresh = leaves_[right];
      const std::uint32_t half = kLeafCapacity / 2;
      for (std::uint32_t j = half; j < kLeafCapacity; ++j)
        fresh.keys[j - half] = left.keys[j];
      fresh.n = kLeafCapacity - half;
      left.n = half;
      if (!less_(key, fresh.keys[0])) target = right;
      split = Split{fresh.keys[0], right, fresh.n};
    }
    Leaf& leaf = leaves_[target];
    const auto end = leaf.keys.begin() + leaf.n;
    const auto pos = std::upper_bound(leaf.keys.begin(), end, key, less_);
    std::copy_backward(pos, end, end + 1);
    *pos = key;
    ++leaf.n;
    if (split) {
      split->low = leaves_[split->node].keys[0];
      split->count = leaves_[split->node].n;
    }
    return split;
  }

  // Inserts `entry` as child `at` of inner `node`, splitting the node when it is full.
  std::optional<Split> add_child(std::uint32_t node, std::uint32_t at, const Split& entry) {
    if (inners_[node].n < kInnerCapacity) {
      place(inners_[node], at, entry);
      return std::nullopt;
    }
    const auto right = static_cast<std::uint32_t>(inners_.size());
    inners_.emplace_back();
    Inner& left = inners_[node];
    Inner& fresh = inners_[right];
    const std::uint32_t half = kInnerCapacity / 2;
    for (std::uint32_t j = half; j < kInnerCapacity; ++j) {
      fresh.child[j - half] = left.child[j];
      fresh.count[j - half] = left.count[j];
      fresh.low[j - half] = left.low[j];
    }
    fresh.n = kInnerCapacity - half;
    left.n = half;
    if (at <= half)
      place(left, at, entry);
    else
      place(fresh, at - half, entry);
    std::size_t total = 0;
    for (std::uint32_t j = 0; j < fresh.n; ++j)
      total += fresh.count[j];
    return Split{fresh.low[0], right, total};
  }

  static void place(Inner& in, std::uint32_t at, const Split& entry) {
    for (std::uint32_t j = in.n; j > at; --j) {
      in.child[j] = in.child[j - 1];
      in.count[j] = in.count[j - 1];
      in.low[j] = in.low[j - 1];
    }
    in.child[at] = entry.node;
    in.count[at] = entry.count;
    in.low[at] = entry.low;
    ++in.n;
  }

  std::vector<Leaf> leaves_;
  std::vector<Inner> inners_;
  std::uint32_t root_ = 0;
  int height_ = 0;  // inner levels above the leaves
  std::size_t size_ = 0;
  [[no_unique_address]] Less less_{};
};

}  // namespace slurmtune::core
