#pragma once
// A random forest of regression trees as a surrogate model for search, in the style of
// SMAC (Hutter et al. 2011, "Sequential model-based optimization for general algorithm
// configuration"; SMAC3's defaults): each tree grown on a bootstrap sample of the
// observations, each split the best reduction of squared error over a random subset of
// the inputs at the midpoints between their sorted values, down to leaves of a few
// observations. A prediction is the trees' mean, with the spread of the trees' answers as
// its variance: a model that needs no kernel, copes with one-hot choices and many inputs,
// and is fitted in n log n a tree. Deterministic given its seed; no Eigen, no state kept
// between fits (a forest is grown again from the data whenever the data change).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/random.hpp"

namespace slurmtune::core::forest {

struct ForestOptions {
  std::size_t trees = 10;          ///< SMAC3's n_trees
  double feature_share = 5.0 / 6;  ///< share of the inputs a split chooses among (ratio_features)
  std::size_t min_split = 3;       ///< a node with fewer observations is a leaf
  std::size_t min_leaf = 3;        ///< neither side of a split has fewer
  std::size_t max_depth = 20;
};

/// Observations: `inputs` holds rows of `dims` numbers (row-major), one per target.
struct TrainingSet {
  std::size_t dims = 0;
  std::vector<double> inputs;
  std::vector<double> targets;
  std::size_t size() const { return targets.size(); }
  std::span<const double> row(std::size_t i) const { return {inputs.data() + i * dims, dims}; }
};

struct Prediction {
  double mean = 0;
  double variance = 0;
};

class RandomForest {
 public:
  /// Grows `options.trees` trees on `data` (at least one observation).
  RandomForest(TrainingSet data, const ForestOptions& options, std::uint64_t seed);

  /// The trees' mean at each of `points` (rows of data.dims numbers), and the variance of
  /// the trees' answers there (at least `kVarianceFloor` of the targets' variance, so
  /// that expected improvement stays defined where every tree agrees).
  std::vector<Prediction> predict(std::span<const double> points) const;
  /// Each of `rows`' prediction by the trees that did not see it (out of bag); by every
  /// tree where each one saw it.
  std::vector<double> leave_one_out_means(std::span<const std::size_t> rows) const;

  static constexpr double kVarianceFloor = 1e-6;

 private:
  struct Node {
    // A split node: inputs[feature] <= threshold goes to `left`, else `right`; a leaf:
    // feature == kLeaf and `value` its observations' mean.
    std::size_t feature = 0;
    double threshold = 0, value = 0;
    std::uint32_t left = 0, right = 0;
  };
  static constexpr std::size_t kLeaf = static_cast<std::size_t>(-1);
  struct Tree {
    std::vector<Node> nodes;
    std::vector<bool> in_bag;  // by observation
    double predict(std::span<const double> point) const;
  };
  Tree grow(std::uint64_t seed) const;
  std::uint32_t grow_node(Tree& tree, std::vector<std::size_t>& rows, std::size_t begin,
                          std::size_t end, std::size_t depth, Xoshiro256& rng) const;

  TrainingSet data_;
  ForestOptions options_;
  double target_variance_ = 0;
  std::size_t features_tried_ = 1;  // inputs a split chooses among: feature_share of them
  std::vector<Tree> trees_;
};

}  // namespace slurmtune::core::forest
