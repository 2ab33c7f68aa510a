#pragma once
// Blind samplers turn a trial index into a configuration. Every sample is a pure function
// of (search space, sampler kind, seed, trial index): nothing is carried from one trial
// to the next, so a resumed study draws exactly what an uninterrupted one would have
// drawn. Model-based samplers (tpe, bohb) learn from results: see suggester.hpp.
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/space/search_space.hpp"

namespace slurmtune::core {

enum class SamplerKind {
  Random,   ///< independent uniform draws (xoshiro256**)
  Halton,   ///< scrambled Halton sequence: quasi-random, covers the space more evenly
  Grid,     ///< exhaustive: `choice` axes are enumerated like `grid` axes
  Tpe,      ///< Optuna 3.1's Tree-structured Parzen Estimator (tpe_sampler.hpp)
  Bohb,     ///< BOHB's multi-fidelity kernel density model (bohb_sampler.hpp)
  Mobster,  ///< a Gaussian process over (configuration, resource) (mobster_suggester.hpp)
  Nsga2,    ///< Optuna 3.1's NSGA-II for several objectives (nsga2_sampler.hpp)
};
/// Whether the sampler learns from reports (and so keeps a history).
inline bool is_model_based(SamplerKind kind) {
  return kind == SamplerKind::Tpe || kind == SamplerKind::Bohb || kind == SamplerKind::Mobster ||
         kind == SamplerKind::Nsga2;
}

std::string_view sampler_keyword(SamplerKind kind);
std::optional<SamplerKind> sampler_kind_from_keyword(std::string_view word);

/// Source of points of the unit cube [0,1)^d, one per trial index.
class UnitPointSampler {
 public:
  virtual ~UnitPointSampler() = default;
  /// Fills `point` (size d) with the point of trial `index`.
  virtual void point(std::uint64_t index, std::vector<double>& point) const = 0;
};

/// Independent uniform points: coordinate j of trial i comes from a generator seeded by
/// derive_seed(seed, stream, i).
class RandomPointSampler final : public UnitPointSampler {
 public:
  explicit RandomPointSampler(std::uint64_t seed) : seed_(seed) {}
  void point(std::uint64_t index, std::vector<double>& point) const override;

 private:
  std::uint64_t seed_;
};

/// Halton sequence with random digit permutations per dimension and digit position
/// (a "generalised Halton" scramble): breaks the correlation between high dimensions
/// that plain Halton has, while keeping its low discrepancy.
class HaltonPointSampler final : public UnitPointSampler {
 public:
  HaltonPointSampler(std::size_t dimensions, std::uint64_t seed);
  void point(std::uint64_t index, std::vector<double>& point) const override;

 private:
  struct Axis {
    std::uint32_t base;
    std::vector<std::vector<std::uint32_t>> permutations;  // [digit position][digit]
  };
  std::vector<Axis> axes_;
};

/// Grid axes crossed with sampled axes, as Ray Tune does: trial i takes grid point
/// i mod G (G = product of grid axis sizes) and its own sampled point.
class ConfigSampler {
 public:
  ConfigSampler(SearchSpace space, SamplerKind kind, std::uint64_t seed);

  Configuration sample(std::uint64_t trial_index) const;
  /// Number of distinct grid points; for SamplerKind::Grid the number of configurations.
  std::uint64_t grid_size() const { return grid_size_; }
  const SearchSpace& space() const { return space_; }
  SamplerKind kind() const { return kind_; }

 private:
  SearchSpace space_;
  SamplerKind kind_;
  std::vector<bool> enumerated_;  // per parameter: walked as a grid axis
  std::uint64_t grid_size_ = 1;
  std::size_t sampled_dimensions_ = 0;  // parameters drawn from the unit cube
  std::unique_ptr<UnitPointSampler> points_;
};

}  // namespace slurmtune::core
