#pragma once
// The range of a step (the study's resource at a report: an epoch, an iteration, a
// sample count). Every way in refuses the rest: the control plane, replay's event logs
// and recorded curves. Doubles hold every whole step up to 2^53 exactly; the pruners,
// the results file and the TensorBoard export turn steps into integers, which a negative,
// NaN or larger step made undefined (-5 and 1e300 came out as -9223372036854775808).
#include <charconv>
#include <cmath>
#include <string>

namespace slurmtune::core {

inline constexpr double kMaxStep = 9007199254740992.0;  // 2^53

/// False for NaN, infinities, negative steps and steps past 2^53.
inline bool valid_step(double step) {
  return step >= 0 && step <= kMaxStep;
}

/// "must be from 0 to 2^53 (9007199254740992), not VALUE", for a refusal: VALUE as
/// Python writes it (NaN, Infinity, 1e+300).
inline std::string step_range_refusal(double step) {
  const std::string refusal = "must be from 0 to 2^53 (9007199254740992), not ";
  if (std::isnan(step)) return refusal + "NaN";
  if (std::isinf(step)) return refusal + (step > 0 ? "Infinity" : "-Infinity");
  char text[32];
  const auto written = std::to_chars(text, text + sizeof text, step);
  return refusal + std::string(text, written.ptr);
}

}  // namespace slurmtune::core
