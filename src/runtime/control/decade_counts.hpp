#pragma once
// Durations counted by decade, for the session's last lines: how long the loop's turns
// took (loop_stalls.hpp), how long decisions waited for a group commit
// (durable_replies.hpp). Bin 0 holds what took up to `first`, bin b what took up to
// first x 10^b, the last what took longer.
#include <array>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace slurmtune::runtime {

template <std::size_t Bins>
class DecadeCounts {
  static_assert(Bins >= 2);

 public:
  using Milliseconds = std::chrono::duration<double, std::milli>;

  explicit DecadeCounts(Milliseconds first) : first_(first) {}

  void add(std::chrono::steady_clock::duration took) {
    std::size_t bin = 0;
    for (Milliseconds edge = first_; bin + 1 < Bins && took > edge; edge *= 10)
      ++bin;
    ++counts_[bin];
  }
  /// What took longer than bin `from`'s lower edge.
  std::uint64_t from(std::size_t bin) const {
    std::uint64_t n = 0;
    for (; bin < Bins; ++bin)
      n += counts_[bin];
    return n;
  }
  /// "up to 1 ms A, 1-10 ms B, 10-100 ms C, 0.1-1 s D, over 1 s E".
  std::string text() const {
    std::string out;
    Milliseconds edge = first_;
    for (std::size_t bin = 0; bin < Bins; ++bin, edge *= 10) {
      const std::string name = bin == 0 ? "up to " + with_unit(edge, edge)
                               : bin + 1 < Bins
                                   ? in_unit_of(edge / 10, edge) + "-" + with_unit(edge, edge)
                                   : "over " + with_unit(edge / 10, edge / 10);
      out += (bin ? ", " : "") + name + " " + std::to_string(counts_[bin]);
    }
    return out;
  }

 private:
  // `value` in the unit `scale` is named in: ms below a second, s from there on.
  static std::string in_unit_of(Milliseconds value, Milliseconds scale) {
    const double number = scale.count() < 1000 ? value.count() : value.count() / 1000;
    std::array<char, 32> text{};
    const auto end = std::to_chars(text.data(), text.data() + text.size(), number).ptr;
    return std::string(text.data(), end);  // "1", "0.1": no ".0"
  }
  static std::string with_unit(Milliseconds value, Milliseconds scale) {
    return in_unit_of(value, scale) + (scale.count() < 1000 ? " ms" : " s");
  }

  Milliseconds first_;
  std::array<std::uint64_t, Bins> counts_{};
};

}  // namespace slurmtune::runtime
