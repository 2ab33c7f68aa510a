#include "core/search/gp/startup_design.hpp"

#include <boost/random/sobol.hpp>
#include <string>

#include "core/error.hpp"
#include "core/random.hpp"

namespace slurmtune::core::gp {

namespace {

constexpr std::uint64_t kMaskStream = 0x736f626f6cULL;  // "sobol"

}  // namespace

SobolDesign::SobolDesign(std::size_t dims, std::uint64_t seed) {
  const std::size_t most = boost::random::default_sobol_table::max_dimension;
  if (dims > most)
    throw InputError("startup_design = \"sobol\" takes at most " + std::to_string(most) +
                     " sampled parameters; the search space has " + std::to_string(dims));
  Xoshiro256 rng(derive_seed(seed, kMaskStream, 0));
  for (std::size_t k = 0; k < dims; ++k)
    masks_.push_back(rng.next());
}

std::vector<double> SobolDesign::point(std::uint64_t index) const {
  std::vector<double> out;
  if (masks_.empty()) return out;
  // Point 0 is the origin, which the engine skips: its first value (seeded with n) is the
  // point n + 1 in Gray-code order. With the origin, the first 2^m points are the whole
  // net, one point in each of its strata.
  boost::random::sobol engine(masks_.size());
  if (index > 0) engine.seed(index - 1);
  for (const std::uint64_t mask : masks_) {
    const std::uint64_t bits = index > 0 ? engine() : 0;
    out.push_back(static_cast<double>((bits ^ mask) >> 11) * 0x1.0p-53);
  }
  return out;
}

}  // namespace slurmtune::core::gp
