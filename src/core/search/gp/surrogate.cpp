#include "core/search/gp/surrogate.hpp"

#include <utility>

#include "core/error.hpp"

namespace slurmtune::core::gp {
namespace {

class GaussianSurrogate final : public Surrogate {
 public:
  GaussianSurrogate(Data data, Hyperparameters h) : posterior_(std::move(data), std::move(h)) {}
  std::vector<Prediction> predict(std::span<const double> points) const override {
    return posterior_.predict(points);
  }
  std::vector<double> leave_one_out_means(std::span<const std::size_t> rows) const override {
    return posterior_.leave_one_out_means(rows);
  }
  std::vector<double> joint_sample(std::span<const double> points,
                                   std::span<const double> normals) const override {
    return posterior_.joint_sample(points, normals);
  }

 private:
  Posterior posterior_;
};

class ForestSurrogate final : public Surrogate {
 public:
  ForestSurrogate(Data data, const forest::ForestOptions& options, std::uint64_t seed)
      : forest_({data.dims, std::move(data.inputs), std::move(data.targets)}, options, seed) {}
  std::vector<Prediction> predict(std::span<const double> points) const override {
    std::vector<Prediction> out;
    for (const auto& p : forest_.predict(points))
      out.push_back({p.mean, p.variance});
    return out;
  }
  std::vector<double> leave_one_out_means(std::span<const std::size_t> rows) const override {
    return forest_.leave_one_out_means(rows);
  }
  std::vector<double> joint_sample(std::span<const double> /*points*/,
                                   std::span<const double> /*normals*/) const override {
    throw UsageError(
        "a random forest draws no joint samples (acquisition = \"thompson\" goes "
        "with surrogate = \"gp\")");
  }

 private:
  forest::RandomForest forest_;
};

}  // namespace

std::unique_ptr<Surrogate> gaussian_surrogate(Data data, Hyperparameters h) {
  return std::make_unique<GaussianSurrogate>(std::move(data), std::move(h));
}

std::unique_ptr<Surrogate> forest_surrogate(Data data, const forest::ForestOptions& options,
                                            std::uint64_t seed) {
  return std::make_unique<ForestSurrogate>(std::move(data), options, seed);
}

}  // namespace slurmtune::core::gp
