#include "runtime/launch/launch_rate.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace slurmtune::runtime {

LaunchRate::LaunchRate(double per_second)
    : per_second_(per_second), burst_(std::max(1.0, per_second)), tokens_(burst_) {
  if (!(per_second > 0) || !std::isfinite(per_second))
    throw UsageError("LaunchRate: launches a second must be a positive number");
}

bool LaunchRate::allows(Clock::time_point now) {
  if (started_) {
    const double elapsed_s = std::chrono::duration<double>(now - refilled_).count();
    tokens_ = std::min(burst_, tokens_ + std::max(0.0, elapsed_s) * per_second_);
  }
  started_ = true;
  refilled_ = now;
  return tokens_ >= 1;
}

}  // namespace slurmtune::runtime
