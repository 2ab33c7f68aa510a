#pragma once
// The parts of numpy whose exact results Optuna's samplers depend on, reproduced
// bit for bit so slurmtune can suggest exactly what Optuna suggests given the same seed
// and history: the legacy `RandomState` stream (MT19937) with the methods Optuna's TPE
// and random samplers call, numpy's pairwise summation, and its (unstable) default
// argsort, whose order among equal values decides which observation gets which
// bandwidth.
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
  /// 32-bit words drawn since seeding: with the seed, the whole state of the stream. A
  /// resumed study records it per trial and restores it with discard().
  std::uint64_t words_drawn() const { return words_drawn_; }
  /// Draws and drops `words` words.
  void discard(std::uint64_t words);
  /// `random_sample()`: 53 random bits from two 32-bit words, in [0, 1).
  double random_sample();
  /// `uniform(low, high)`: low + (high - low) * random_sample().
  double uniform(double low, double high) { return low + (high - low) * random_sample(); }
  /// `randint(low, high)` (high exclusive) for ranges that fit 32 bits: masked rejection.
  std::int64_t randint(std::int64_t low, std::int64_t high);
  /// `choice(len(p), size, p=p)`: cumulative sums normalised by the last, then a
  /// right-sided search for each of `size` uniform draws.
  std::vector<std::size_t> choice(std::span<const double> p, std::size_t size);

  template <class Archive>
  void serialize(Archive& archive) {
    archive(state_, position_, words_drawn_);
  }

 private:
  std::array<std::uint32_t, 624> state_{};
  std::size_t position_ = 624;
  std::uint64_t words_drawn_ = 0;
  void twist();
};

/// `numpy.sum` of a contiguous float64 array: numpy's pairwise summation (8-way unrolled
/// blocks of at most 128), so sums round exactly as numpy's do.
double numpy_sum(std::span<const double> values);

/// `numpy.argsort(values)` (kind "quicksort": numpy's introsort with insertion sort below
/// 16 elements and heapsort past 2 log2(n) levels; NaN sorts last). Equal values come out
/// in numpy's order, which is not stable.
std::vector<std::size_t> numpy_argsort(std::span<const double> values);

}  // namespace slurmtune::core
