#include "core/random.hpp"

namespace slurmtune::core {
namespace {
__extension__ typedef unsigned __int128 u128;  // GCC/Clang builtin, exact 64x64->128 product
constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

Xoshiro256::Xoshiro256(std::uint64_t seed) noexcept {
  std::uint64_t x = seed;
  for (auto& word : s_) {
    x += 0x9e3779b97f4a7c15ULL;
    word = mix64(x - 0x9e3779b97f4a7c15ULL);
  }
}

std::uint64_t Xoshiro256::next() noexcept {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Xoshiro256::below(std::uint64_t n) noexcept {
  // Lemire, "Fast random integer generation in an interval" (2019).
  u128 m = static_cast<u128>(next()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(next()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

}  // namespace slurmtune::core
