#include "core/schedulers/scheduler_spec.hpp"

#include <array>
#include <cmath>
#include <utility>

#include "core/error.hpp"

namespace slurmtune::core {
namespace {
constexpr std::array<std::pair<SchedulerType, std::string_view>, 7> kTypes{{
    {SchedulerType::Fifo, "fifo"},
    {SchedulerType::Asha, "asha"},
    {SchedulerType::AshaPromotion, "asha_promotion"},
    {SchedulerType::Hyperband, "hyperband"},
    {SchedulerType::Median, "median"},
    {SchedulerType::Pbt, "pbt"},
    {SchedulerType::FreezeThaw, "freeze_thaw"},
}};
}  // namespace

std::string_view job_cost_keyword(JobCost cost) {
  switch (cost) {
    case JobCost::None:
      return "none";
    case JobCost::Resource:
      return "resource";
    case JobCost::Seconds:
      return "seconds";
  }
  return "?";
}

std::string_view trust_waiver_keyword(TrustWaiver waiver) {
  switch (waiver) {
    case TrustWaiver::None:
      return "none";
    case TrustWaiver::Gain:
      return "gain";
    case TrustWaiver::Overtake:
      return "overtake";
  }
  return "?";
}

std::string_view scheduler_keyword(SchedulerType type) {
  for (const auto& [t, word] : kTypes)
    if (t == type) return word;
  return "?";
}

std::optional<SchedulerType> scheduler_type_from_keyword(std::string_view word) {
  for (const auto& [t, w] : kTypes)
    if (w == word) return t;
  return std::nullopt;
}

std::vector<double> geometric_milestones(double grace, double rf, double max_t, int skip) {
  std::vector<double> out;
  if (!(grace > 0) || !(rf > 1)) return out;
  double m = grace;
  for (int k = 0; m <= max_t; ++k, m *= rf)
    if (k >= skip) out.push_back(m);
  return out;
}

}  // namespace slurmtune::core
