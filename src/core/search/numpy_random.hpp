#pragma once
// The random stream of numpy's legacy `RandomState` (MT19937), reproduced draw for draw:
// Optuna's samplers draw from it, so slurmtune can suggest exactly what Optuna suggests
// given the same seed and history. Only the methods Optuna's TPE and random samplers
// call are here, each with numpy's arithmetic (numpy/random/_mt19937.pyx, mtrand.pyx,
// distributions.c).
#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace slurmtune::core {

class NumpyRandomState {
 public:
  /// `RandomState(seed)` for an integer seed in [0, 2^32): MT19937's init_genrand.
  explicit NumpyRandomState(std::uint32_t seed);

  std::uint32_t next_uint32();
  /// `random_sample()`: 53 random bits from two 32-bit words, in [0, 1).
  double random_sample();
  /// `uniform(low, high)`: low + (high - low) * random_sample().
  double uniform(double low, double high) { return low + (high - low) * random_sample(); }
  /// `randint(low, high)` (high exclusive) for ranges that fit 32 bits: masked rejection.
  std::int64_t randint(std::int64_t low, std::int64_t high);
  /// `choice(len(p), size, p=p)`: cumulative sums normalised by the last, then a
  /// right-sided search for each of `size` uniform draws.
  std::vector<std::size_t> choice(std::span<const double> p, std::size_t size);

 private:
  std::array<std::uint32_t, 624> state_{};
  std::size_t position_ = 624;
  void twist();
};

/// `numpy.sum` of a contiguous float64 array: numpy's pairwise summation (8-way unrolled
/// blocks of at most 128), so sums round exactly as numpy's do.
double numpy_sum(std::span<const double> values);

}  // namespace slurmtune::core
