#pragma once
// Portable pseudo-random numbers. The standard library's engines are portable but its
// distributions are implementation-defined, so every draw below is our own arithmetic:
// the same seed gives the same numbers with any compiler on any machine.
#include <array>
#include <cstdint>

namespace slurmtune::core {

/// SplitMix64 finaliser: a bijective 64-bit mixer used to derive independent seeds.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Seed of an independent stream `stream` at position `index` under `seed`. Used to make
/// every draw a pure function of (seed, purpose, trial), which is what lets a resumed
/// study reproduce the decisions of an uninterrupted one.
constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream,
                                    std::uint64_t index) noexcept {
  return mix64(mix64(mix64(seed) ^ stream) ^ index);
}

/// xoshiro256** 1.0 (Blackman & Vigna), seeded through SplitMix64.
class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed) noexcept;

  std::uint64_t next() noexcept;
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform01() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n) without modulo bias (Lemire's method); n > 0.
  std::uint64_t below(std::uint64_t n) noexcept;

  template <class Archive>  // a snapshot (core/state_archive.hpp)
  void serialize(Archive& archive) {
    archive(s_);
  }

 private:
  std::array<std::uint64_t, 4> s_;
};

}  // namespace slurmtune::core
