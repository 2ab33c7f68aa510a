#include "runtime/coordinator/loop_stalls.hpp"

#include <cmath>

#include "core/number_text.hpp"

namespace slurmtune::runtime {
namespace {

std::string ms(LoopStalls::Clock::duration d) {
  const double value = std::chrono::duration<double, std::milli>(d).count();
  return core::format_double(std::round(value * 10) / 10) + " ms";
}

}  // namespace

void LoopStalls::record(int events, Clock::duration events_time, Clock::duration periodic_time) {
  const Turn turn{events, events_time, periodic_time};
  ++turns_;
  const auto total = turn.total();
  if (total > longest_.total()) longest_ = turn;
  if (total > window_.total()) window_ = turn;
  using std::chrono::milliseconds;
  for (std::size_t i = 0; i < over_.size(); ++i)
    if (total > milliseconds(static_cast<long>(std::pow(10, i + 1)))) ++over_[i];
}

std::string LoopStalls::take_window() {
  std::string text = "longest loop turn " + ms(window_.total());
  window_ = Turn{};
  return text;
}

double LoopStalls::longest_ms() const {
  return std::chrono::duration<double, std::milli>(longest_.total()).count();
}

std::string LoopStalls::summary() const {
  return "loop: longest turn " + ms(longest_.total()) + " (" + std::to_string(longest_.events) +
         " event(s) " + ms(longest_.events_time) + ", periodic work " + ms(longest_.periodic_time) +
         "); turns over 10 ms: " + std::to_string(over_[0]) +
         ", over 100 ms: " + std::to_string(over_[1]) + ", over 1 s: " + std::to_string(over_[2]) +
         " (of " + std::to_string(turns_) + ")";
}

}  // namespace slurmtune::runtime
