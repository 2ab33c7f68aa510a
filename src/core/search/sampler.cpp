#include "core/search/sampler.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "core/random.hpp"

namespace slurmtune::core {
namespace {

constexpr std::uint64_t kPointStream = 0x73616d706c6572ULL;   // "sampler"
constexpr std::uint64_t kScrambleStream = 0x68616c746f6eULL;  // "halton"

std::vector<std::uint32_t> first_primes(std::size_t count) {
  std::vector<std::uint32_t> primes;
  for (std::uint32_t n = 2; primes.size() < count; ++n) {
    bool prime = true;
    for (const auto p : primes) {
      if (p * p > n) break;
      if (n % p == 0) {
        prime = false;
        break;
      }
    }
    if (prime) primes.push_back(n);
  }
  return primes;
}

std::size_t axis_size(const Domain& d) {
  return d.values.size();
}

}  // namespace

std::string_view sampler_keyword(SamplerKind kind) {
  switch (kind) {
    case SamplerKind::Random:
      return "random";
    case SamplerKind::Halton:
      return "halton";
    case SamplerKind::Grid:
      return "grid";
    case SamplerKind::Tpe:
      return "tpe";
    case SamplerKind::Bohb:
      return "bohb";
    case SamplerKind::Mobster:
      return "mobster";
    case SamplerKind::Nsga2:
      return "nsga2";
  }
  return "?";
}

std::optional<SamplerKind> sampler_kind_from_keyword(std::string_view word) {
  for (const auto kind :
       {SamplerKind::Random, SamplerKind::Halton, SamplerKind::Grid, SamplerKind::Tpe,
        SamplerKind::Bohb, SamplerKind::Mobster, SamplerKind::Nsga2})
    if (sampler_keyword(kind) == word) return kind;
  return std::nullopt;
}

void RandomPointSampler::point(std::uint64_t index, std::vector<double>& point) const {
  Xoshiro256 rng(derive_seed(seed_, kPointStream, index));
  for (auto& x : point)
    x = rng.uniform01();
}

HaltonPointSampler::HaltonPointSampler(std::size_t dimensions, std::uint64_t seed) {
  const auto primes = first_primes(dimensions);
  for (std::size_t j = 0; j < dimensions; ++j) {
    Axis axis{primes[j], {}};
    // Enough digits that base^digits exceeds 2^53: further digits cannot change a double.
    std::size_t digits = 0;
    for (double scale = 1.0; scale < 0x1.0p53; scale *= primes[j])
      ++digits;
    Xoshiro256 rng(derive_seed(seed, kScrambleStream, j));
    for (std::size_t k = 0; k < digits; ++k) {
      std::vector<std::uint32_t> perm(axis.base);
      std::iota(perm.begin(), perm.end(), 0U);
      for (std::size_t i = perm.size() - 1; i > 0; --i)  // Fisher-Yates with our own draws
        std::swap(perm[i], perm[rng.below(i + 1)]);
      axis.permutations.push_back(std::move(perm));
    }
    axes_.push_back(std::move(axis));
  }
}

void HaltonPointSampler::point(std::uint64_t index, std::vector<double>& point) const {
  for (std::size_t j = 0; j < point.size(); ++j) {
    const Axis& axis = axes_[j];
    double value = 0.0;
    double scale = 1.0 / axis.base;
    std::uint64_t rest = index;
    // Every digit position is permuted, including the zero digits above the index's
    // length: that is what makes the scramble a random shift of the whole sequence.
    for (const auto& perm : axis.permutations) {
      value += perm[rest % axis.base] * scale;
      rest /= axis.base;
      scale /= axis.base;
    }
    point[j] = value < 1.0 ? value : std::nextafter(1.0, 0.0);
  }
}

ConfigSampler::ConfigSampler(SearchSpace space, SamplerKind kind, std::uint64_t seed)
    : space_(std::move(space)), kind_(kind) {
  if (is_model_based(kind))
    throw UsageError("ConfigSampler draws blind configurations; tpe and bohb are Suggesters");
  for (const auto& p : space_.parameters()) {
    const bool walk = p.domain.kind == DomainKind::Grid ||
                      (kind == SamplerKind::Grid && p.domain.kind == DomainKind::Choice);
    if (kind == SamplerKind::Grid && p.domain.is_sampled() && !walk)
      throw InputError("sampler \"grid\" enumerates every configuration, but parameter '" + p.name +
                       "' is " + std::string(domain_keyword(p.domain.kind)) +
                       "; make it a grid or choice, or use sampler \"random\" or \"halton\"");
    enumerated_.push_back(walk);
    if (walk) {
      const std::uint64_t n = axis_size(p.domain);
      grid_size_ = grid_size_ > std::numeric_limits<std::uint64_t>::max() / n
                       ? std::numeric_limits<std::uint64_t>::max()
                       : grid_size_ * n;
    } else if (p.domain.is_sampled()) {
      ++sampled_dimensions_;
    }
  }
  if (kind == SamplerKind::Halton)
    points_ = std::make_unique<HaltonPointSampler>(sampled_dimensions_, seed);
  else
    points_ = std::make_unique<RandomPointSampler>(seed);
}

Configuration ConfigSampler::sample(std::uint64_t trial_index) const {
  std::vector<double> unit(sampled_dimensions_);
  points_->point(trial_index, unit);
  Configuration config;
  config.values.reserve(space_.size());
  // The first enumerated axis varies fastest, like nested loops with it innermost.
  std::uint64_t grid_rest = trial_index % grid_size_;
  std::size_t next_unit = 0;
  for (std::size_t i = 0; i < space_.size(); ++i) {
    const Domain& d = space_.parameters()[i].domain;
    if (enumerated_[i]) {
      const std::uint64_t n = axis_size(d);
      config.values.push_back(d.values[grid_rest % n]);
      grid_rest /= n;
    } else if (d.is_sampled()) {
      config.values.push_back(d.from_unit(unit[next_unit++]));
    } else {
      config.values.push_back(d.values.front());
    }
  }
  // A conditional parameter drawn for a configuration it does not exist in is dropped
  // (its coordinate is spent either way, so the others do not move).
  space_.resolve_activity(config);
  return config;
}

}  // namespace slurmtune::core
