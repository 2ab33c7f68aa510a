#pragma once
// The resolved `[study] sampler` and its `[sampler]` options.
#include <cstddef>
#include <optional>

#include "core/search/sampler.hpp"
#include "core/search/tpe_sampler.hpp"

namespace slurmtune::core {

/// BOHB's configuration generator (Falkner et al. 2018; HpBandSter, which Ray Tune's
/// TuneBOHB wraps), with its defaults.
struct BohbOptions {
  double top_n_percent = 15;           ///< share of a budget's observations that are "good"
  std::size_t num_samples = 64;        ///< candidates drawn around good points per suggestion
  double random_fraction = 1.0 / 3.0;  ///< share of suggestions drawn at random
  double bandwidth_factor = 3;         ///< widens the good density's kernels when sampling
  double min_bandwidth = 1e-3;         ///< floor of every kernel bandwidth
  /// Observations a budget needs before a model is fitted on it; nullopt: dimensions + 1.
  std::optional<std::size_t> min_points_in_model;
};

struct SamplerSpec {
  SamplerKind kind = SamplerKind::Random;
  tpe::TpeOptions tpe;  ///< kind == Tpe
  BohbOptions bohb;     ///< kind == Bohb
};

}  // namespace slurmtune::core
