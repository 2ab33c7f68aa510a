#include "core/schedulers/rung_ladder.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace slurmtune::core {

namespace {

constexpr double kSameRung = 1e-9;  // relative: rungs this close to max_t are max_t

bool reaches(double rung, double max_t) {
  return rung >= max_t * (1 - kSameRung);
}

// Resources as people write them: 20, not 20.0; 0.3, not 0.30000000000000004.
std::string resource_text(double r) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", r);
  return text;
}

std::string joined(const std::vector<double>& rungs) {
  std::string out;
  for (const double r : rungs) {
    if (!out.empty()) out += ", ";
    out += resource_text(r);
  }
  return out;
}

std::string ends_at(const SchedulerSpec& spec) {
  return "; a trial ends at max_t = " + resource_text(spec.max_t);
}

std::vector<std::string> ray_asha_lines(const SchedulerSpec& spec) {
  std::vector<std::string> lines;
  for (int s = 0; s < spec.brackets; ++s) {
    const auto rungs = bracket_milestones(spec, s);
    lines.push_back((spec.brackets > 1 ? "bracket " + std::to_string(s) + ": " : "") +
                    "stops the worst at " + joined(rungs) + ends_at(spec));
  }
  return lines;
}

std::vector<std::string> ray_hyperband_lines(const SchedulerSpec& spec) {
  const auto rungs = geometric_milestones(spec.grace_period, spec.reduction_factor, spec.max_t);
  const int s_max = static_cast<int>(rungs.size()) - 1;
  std::vector<std::string> lines;
  for (int s = s_max; s >= 0; --s) {
    std::vector<double> budgets;
    for (int i = 0; i <= s; ++i)
      budgets.push_back(spec.max_t * std::pow(spec.reduction_factor, i - s));
    lines.push_back("bracket " + std::to_string(s_max - s) + ": rungs " + joined(budgets));
  }
  return lines;
}

std::vector<std::string> optuna_lines(const SchedulerSpec& spec) {
  const std::string rf = resource_text(spec.reduction_factor);
  if (spec.type == SchedulerType::Hyperband) {
    const std::string top =
        spec.max_resource ? std::to_string(*spec.max_resource) : "the longest completed trial";
    return {"Optuna's HyperbandPruner: brackets of successive halving by " + rf + " from " +
            std::to_string(spec.min_resource.value_or(1)) + " to " + top + ends_at(spec)};
  }
  if (!spec.min_resource)
    return {"Optuna's SuccessiveHalvingPruner: rungs min_resource * " + rf +
            "^k, min_resource taken from the first trial to complete (\"auto\")" + ends_at(spec)};
  std::vector<double> rungs;
  const auto min = static_cast<double>(*spec.min_resource);
  for (auto k = spec.min_early_stopping_rate;; ++k) {
    const double r = min * std::pow(spec.reduction_factor, static_cast<double>(k));
    if (reaches(r, spec.max_t) || rungs.size() >= 64) break;
    rungs.push_back(r);
  }
  return {"Optuna's SuccessiveHalvingPruner: prunes at " +
          (rungs.empty() ? std::string("no rung below max_t") : joined(rungs)) + ends_at(spec)};
}

}  // namespace

std::vector<double> bracket_milestones(const SchedulerSpec& spec, int skip) {
  if (!spec.milestones.empty()) return spec.milestones;
  return geometric_milestones(spec.grace_period, spec.reduction_factor, spec.max_t, skip);
}

std::vector<double> promotion_milestones(const SchedulerSpec& spec) {
  std::vector<double> rungs;
  for (const double r : bracket_milestones(spec)) {
    if (reaches(r, spec.max_t)) break;
    rungs.push_back(r);
  }
  rungs.push_back(spec.max_t);
  return rungs;
}

std::vector<std::string> describe_rungs(const SchedulerSpec& spec) {
  switch (spec.type) {
    case SchedulerType::Fifo:
      return {"every trial runs to max_t = " + resource_text(spec.max_t)};
    case SchedulerType::Asha:
      return spec.semantics == Semantics::Optuna ? optuna_lines(spec) : ray_asha_lines(spec);
    case SchedulerType::Hyperband:
      return spec.semantics == Semantics::Optuna ? optuna_lines(spec) : ray_hyperband_lines(spec);
    case SchedulerType::AshaPromotion:
    case SchedulerType::FreezeThaw:
      return {"pauses at " + joined(promotion_milestones(spec)) + " (the last is max_t)"};
    case SchedulerType::Median:
      return {"stops a trial below the median from " + resource_text(spec.grace_period) + " on" +
              ends_at(spec)};
    case SchedulerType::Pbt:
      return {"perturbs every " + resource_text(spec.pbt.perturbation_interval) + " after " +
              resource_text(spec.pbt.burn_in_period) + ends_at(spec)};
  }
  return {};
}

}  // namespace slurmtune::core
