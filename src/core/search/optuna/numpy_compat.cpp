#include "core/search/optuna/numpy_compat.hpp"

#include <algorithm>
#include <stdexcept>

namespace slurmtune::core {

NumpyRandomState::NumpyRandomState(std::uint32_t seed) {
  state_[0] = seed;
  for (std::uint32_t i = 1; i < 624; ++i)
    state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + i;
  position_ = 624;
}

void NumpyRandomState::twist() {
  constexpr std::uint32_t kUpper = 0x80000000u, kLower = 0x7fffffffu, kMatrix = 0x9908b0dfu;
  for (std::size_t i = 0; i < 624; ++i) {
    const std::uint32_t y = (state_[i] & kUpper) | (state_[(i + 1) % 624] & kLower);
    state_[i] = state_[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? kMatrix : 0u);
  }
  position_ = 0;
}

void NumpyRandomState::discard(std::uint64_t words) {
  for (std::uint64_t i = 0; i < words; ++i)
    next_uint32();
}

std::uint32_t NumpyRandomState::next_uint32() {
  ++words_drawn_;
  if (position_ >= 624) twist();
  std::uint32_t y = state_[position_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

double NumpyRandomState::random_sample() {
  const std::uint32_t a = next_uint32() >> 5, b = next_uint32() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

std::int64_t NumpyRandomState::randint(std::int64_t low, std::int64_t high) {
  if (high <= low) throw std::invalid_argument("randint: high <= low");
  const auto range = static_cast<std::uint64_t>(high - low - 1);
  if (range == 0) return low;
  if (range > 0xffffffffu) throw std::invalid_argument("randint: range beyond 32 bits");
  // The smallest all-ones mask covering the range; draws above the range are rejected.
  std::uint32_t mask = static_cast<std::uint32_t>(range);
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  std::uint32_t value = 0;
  while ((value = next_uint32() & mask) > range) {
  }
  return low + static_cast<std::int64_t>(value);
}

std::vector<std::size_t> NumpyRandomState::choice(std::span<const double> p, std::size_t size) {
  std::vector<double> cdf(p.size());
  double running = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    cdf[i] = running += p[i];  // numpy's cumsum is sequential
  const double last = cdf.back();
  for (double& c : cdf)
    c /= last;
  std::vector<std::size_t> chosen(size);
  for (auto& index : chosen) {
    const double u = random_sample();
    index = static_cast<std::size_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
  }
  return chosen;
}

namespace {

// numpy's pairwise_sum (numpy/core/src/umath/loops_utils.h.src), for unit stride.
double pairwise(const double* a, std::size_t n) {
  constexpr std::size_t kBlock = 128;
  if (n < 8) {
    double res = 0.;
    for (std::size_t i = 0; i < n; ++i)
      res += a[i];
    return res;
  }
  if (n <= kBlock) {
    double r[8];
    for (std::size_t k = 0; k < 8; ++k)
      r[k] = a[k];
    std::size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (std::size_t k = 0; k < 8; ++k)
        r[k] += a[i + k];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i)
      res += a[i];
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

// numpy's ordering of doubles: NaN after everything.
bool less(double a, double b) {
  return a < b || (b != b && a == a);
}

int highest_bit(std::size_t n) {
  int bit = 0;
  while (n >>= 1)
    ++bit;
  return bit;
}

// Heapsort of the index range [first, first + n) by value (the introsort's fallback).
void heap_sort(std::span<const double> v, std::size_t* first, std::size_t n) {
  std::size_t* a = first - 1;  // one-based heap
  const auto sift = [&](std::size_t top, std::size_t size, std::size_t item) {
    std::size_t i = top;
    for (std::size_t j = top << 1; j <= size;) {
      if (j < size && less(v[a[j]], v[a[j + 1]])) ++j;
      if (!less(v[item], v[a[j]])) break;
      a[i] = a[j];
      i = j;
      j += j;
    }
    a[i] = item;
  };
  for (std::size_t l = n >> 1; l > 0; --l)
    sift(l, n, a[l]);
  for (; n > 1;) {
    const std::size_t item = a[n];
    a[n] = a[1];
    --n;
    sift(1, n, item);
  }
}

}  // namespace

std::vector<std::size_t> numpy_argsort(std::span<const double> v) {
  constexpr std::ptrdiff_t kSmall = 15;  // partitions up to 16 elements: insertion sort
  std::vector<std::size_t> order(v.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  if (order.size() < 2) return order;
  struct Pending {
    std::size_t* left;
    std::size_t* right;
    int depth;
  };
  std::vector<Pending> stack;
  std::size_t* left = order.data();
  std::size_t* right = order.data() + order.size() - 1;
  int depth = highest_bit(order.size()) * 2;
  for (;;) {
    if (depth < 0) {
      heap_sort(v, left, static_cast<std::size_t>(right - left + 1));
    } else {
      while (right - left > kSmall) {
        // Median of three moved next to the right end, then Hoare partition.
        std::size_t* mid = left + ((right - left) >> 1);
        if (less(v[*mid], v[*left])) std::swap(*mid, *left);
        if (less(v[*right], v[*mid])) std::swap(*right, *mid);
        if (less(v[*mid], v[*left])) std::swap(*mid, *left);
        const double pivot = v[*mid];
        std::size_t* i = left;
        std::size_t* j = right - 1;
        std::swap(*mid, *j);
        for (;;) {
          while (less(v[*++i], pivot)) {
          }
          while (less(pivot, v[*--j])) {
          }
          if (i >= j) break;
          std::swap(*i, *j);
        }
        std::swap(*i, *(right - 1));
        // The larger side waits on the stack; the smaller is sorted next.
        if (i - left < right - i) {
          stack.push_back({i + 1, right, --depth});
          right = i - 1;
        } else {
          stack.push_back({left, i - 1, --depth});
          left = i + 1;
        }
      }
      for (std::size_t* i = left + 1; i <= right; ++i) {
        const std::size_t item = *i;
        std::size_t* j = i;
        for (; j > left && less(v[item], v[*(j - 1)]); --j)
          *j = *(j - 1);
        *j = item;
      }
    }
    if (stack.empty()) break;
    left = stack.back().left;
    right = stack.back().right;
    depth = stack.back().depth;
    stack.pop_back();
  }
  return order;
}

double numpy_sum(std::span<const double> values) {
  // A contiguous 1-d np.sum is pairwise_sum over every element (checked against numpy
  // 1.24 on 2,000 random arrays: tests/unit/core/test_numpy_random.cpp).
  return pairwise(values.data(), values.size());
}

}  // namespace slurmtune::core
