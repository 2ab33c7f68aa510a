#include "core/search/forest/random_forest.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace slurmtune::core::forest {
namespace {

constexpr std::uint64_t kTreeStream = 0x74726565ULL;  // "tree"

// The best split of rows[begin, end) on one input: (squared error left + right, threshold),
// or none where no threshold leaves min_leaf observations on each side.
struct Split {
  double error = 0, threshold = 0;
  bool found = false;
};

Split best_split_on(const TrainingSet& data, std::vector<std::size_t>& rows, std::size_t begin,
                    std::size_t end, std::size_t feature, std::size_t min_leaf) {
  const auto first = rows.begin() + static_cast<std::ptrdiff_t>(begin);
  const auto last = rows.begin() + static_cast<std::ptrdiff_t>(end);
  const auto value = [&](std::size_t row) { return data.inputs[row * data.dims + feature]; };
  std::stable_sort(first, last, [&](std::size_t a, std::size_t b) { return value(a) < value(b); });
  double total = 0, total_squares = 0;
  for (auto it = first; it != last; ++it) {
    total += data.targets[*it];
    total_squares += data.targets[*it] * data.targets[*it];
  }
  const std::size_t n = end - begin;
  Split best;
  double left = 0, left_squares = 0;
  for (std::size_t k = 1; k < n; ++k) {
    const double y = data.targets[rows[begin + k - 1]];
    left += y;
    left_squares += y * y;
    if (k < min_leaf || n - k < min_leaf) continue;
    const double below = value(rows[begin + k - 1]), above = value(rows[begin + k]);
    if (!(below < above)) continue;  // equal values stay on one side
    const auto nk = static_cast<double>(k), nr = static_cast<double>(n - k);
    const double right = total - left, right_squares = total_squares - left_squares;
    const double error = (left_squares - left * left / nk) + (right_squares - right * right / nr);
    if (!best.found || error < best.error) best = {error, below + 0.5 * (above - below), true};
  }
  return best;
}

}  // namespace

RandomForest::RandomForest(TrainingSet data, const ForestOptions& options, std::uint64_t seed)
    : data_(std::move(data)), options_(options) {
  if (data_.size() == 0 || data_.dims == 0 || data_.inputs.size() != data_.size() * data_.dims)
    throw UsageError("random forest: " + std::to_string(data_.size()) + " observations of " +
                     std::to_string(data_.dims) + " inputs do not make a training set");
  if (options_.trees == 0 || options_.min_leaf == 0)
    throw UsageError("random forest: it needs a tree and leaves of an observation or more");
  const double n = static_cast<double>(data_.size());
  const double mean = std::accumulate(data_.targets.begin(), data_.targets.end(), 0.0) / n;
  for (const double y : data_.targets)
    target_variance_ += (y - mean) * (y - mean) / n;
  features_tried_ = std::clamp<std::size_t>(
      static_cast<std::size_t>(
          std::lround(options_.feature_share * static_cast<double>(data_.dims))),
      1, data_.dims);
  trees_.reserve(options_.trees);
  for (std::size_t t = 0; t < options_.trees; ++t)
    trees_.push_back(grow(derive_seed(seed, kTreeStream, t)));
}

RandomForest::Tree RandomForest::grow(std::uint64_t seed) const {
  Xoshiro256 rng(seed);
  Tree tree;
  tree.in_bag.assign(data_.size(), false);
  std::vector<std::size_t> rows(data_.size());
  for (auto& row : rows) {
    row = static_cast<std::size_t>(rng.below(data_.size()));
    tree.in_bag[row] = true;
  }
  grow_node(tree, rows, 0, rows.size(), 0, rng);
  return tree;
}

std::uint32_t RandomForest::grow_node(Tree& tree, std::vector<std::size_t>& rows, std::size_t begin,
                                      std::size_t end, std::size_t depth, Xoshiro256& rng) const {
  const auto index = static_cast<std::uint32_t>(tree.nodes.size());
  tree.nodes.push_back({});
  double sum = 0;
  for (std::size_t k = begin; k < end; ++k)
    sum += data_.targets[rows[k]];
  const std::size_t n = end - begin;
  Node node{kLeaf, 0, sum / static_cast<double>(n), 0, 0};
  if (n >= options_.min_split && n >= 2 * options_.min_leaf && depth < options_.max_depth) {
    // The inputs this split chooses among: a random share of them (partial Fisher-Yates).
    std::vector<std::size_t> features(data_.dims);
    std::iota(features.begin(), features.end(), std::size_t{0});
    Split best;
    std::size_t best_feature = 0;
    for (std::size_t f = 0; f < features_tried_; ++f) {
      std::swap(features[f], features[f + rng.below(data_.dims - f)]);
      const Split s = best_split_on(data_, rows, begin, end, features[f], options_.min_leaf);
      if (s.found && (!best.found || s.error < best.error)) {
        best = s;
        best_feature = features[f];
      }
    }
    if (best.found) {
      const auto middle =
          std::partition(rows.begin() + static_cast<std::ptrdiff_t>(begin),
                         rows.begin() + static_cast<std::ptrdiff_t>(end), [&](std::size_t row) {
                           return data_.inputs[row * data_.dims + best_feature] <= best.threshold;
                         });
      const auto split = static_cast<std::size_t>(middle - rows.begin());
      node.feature = best_feature;
      node.threshold = best.threshold;
      node.left = grow_node(tree, rows, begin, split, depth + 1, rng);
      node.right = grow_node(tree, rows, split, end, depth + 1, rng);
    }
  }
  tree.nodes[index] = node;
  return index;
}

double RandomForest::Tree::predict(std::span<const double> point) const {
  std::size_t at = 0;
  while (nodes[at].feature != kLeaf)
    at = point[nodes[at].feature] <= nodes[at].threshold ? nodes[at].left : nodes[at].right;
  return nodes[at].value;
}

std::vector<Prediction> RandomForest::predict(std::span<const double> points) const {
  if (points.size() % data_.dims != 0)
    throw UsageError("random forest: points of " + std::to_string(points.size()) +
                     " numbers are not rows of " + std::to_string(data_.dims));
  const std::size_t count = points.size() / data_.dims;
  const double floor = std::max(kVarianceFloor * target_variance_, 1e-12);
  std::vector<Prediction> out(count);
  const auto trees = static_cast<double>(trees_.size());
  for (std::size_t i = 0; i < count; ++i) {
    const auto point = points.subspan(i * data_.dims, data_.dims);
    double sum = 0, squares = 0;
    for (const auto& tree : trees_) {
      const double y = tree.predict(point);
      sum += y;
      squares += y * y;
    }
    const double mean = sum / trees;
    out[i] = {mean, std::max(squares / trees - mean * mean, floor)};
  }
  return out;
}

std::vector<double> RandomForest::leave_one_out_means(std::span<const std::size_t> rows) const {
  std::vector<double> out;
  out.reserve(rows.size());
  for (const std::size_t row : rows) {
    if (row >= data_.size()) throw UsageError("random forest: leave-one-out row out of range");
    double out_of_bag = 0, every = 0;
    std::size_t unseen = 0;
    for (const auto& tree : trees_) {
      const double y = tree.predict(data_.row(row));
      every += y;
      if (!tree.in_bag[row]) {
        out_of_bag += y;
        ++unseen;
      }
    }
    out.push_back(unseen > 0 ? out_of_bag / static_cast<double>(unseen)
                             : every / static_cast<double>(trees_.size()));
  }
  return out;
}

}  // namespace slurmtune::core::forest
