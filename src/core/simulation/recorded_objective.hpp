#pragma once
// Recorded learning curves as the objective. The table is a finite set: the sampler
// picks among its configurations, each at most once unless `reuse` is set (Syne Tune's
// "restricted configurations"):
//   - random: uniformly among those not yet drawn, or, with `nearest_random`, the one
//     nearest to the random sampler's point, as for tpe and bohb below;
//   - halton: the one nearest (in the unit cube of the sampled parameters) to the
//     sampler's point, among those not yet drawn;
//   - grid:   every configuration in table order;
//   - tpe, bohb: the one nearest to the model's suggestion, among those not yet drawn
//     (the model then learns from the configuration that ran).
// A configuration recorded several times (seed/repeat) follows one of its runs, chosen
// by (seed, configuration): the same for every trial of one simulation.
#include <vector>

#include "core/search/sampler.hpp"
#include "core/simulation/objective.hpp"
#include "core/study/study_spec.hpp"

namespace slurmtune::core {

class RecordedObjective final : public Objective {
 public:
  RecordedObjective(const CurveTable& table, const StudySpec& study, bool reuse,
                    bool nearest_random = false);

  std::optional<CurveId> draw(TrialId trial, const Suggestion& suggestion) override;
  Configuration configuration(CurveId curve) const override {
    return table_->configurations()[table_->curve(static_cast<std::uint32_t>(curve)).config];
  }
  std::optional<CurvePoint> report(CurveId curve, TrialId /*trial*/,
                                   std::uint32_t index) const override {
    const auto id = static_cast<std::uint32_t>(curve);
    if (index >= table_->curve(id).length) return std::nullopt;
    return table_->point(id, index);
  }
  TrialEnd recorded_end(CurveId curve) const override {
    return table_->curve(static_cast<std::uint32_t>(curve)).end;
  }
  std::uint64_t capacity() const override;

 private:
  std::size_t pick(TrialId trial, const Suggestion& suggestion);
  /// The configuration nearest to the suggestion's point.
  std::size_t nearest_to(const Suggestion& suggestion);
  /// The configuration nearest to point_ (unit coordinates of the sampled parameters).
  std::size_t nearest_unused();
  CurveId curve_of(std::size_t config) const;

  const CurveTable* table_;
  SamplerKind kind_;
  std::uint64_t seed_;
  bool reuse_;
  bool nearest_random_;
  std::vector<std::size_t> remaining_;  // random: configurations not yet drawn
  std::vector<bool> used_;              // halton, tpe, bohb: configurations drawn
  std::vector<double> units_;           // the same: [config * dims + d] unit coordinates
  std::size_t dims_ = 0;
  std::unique_ptr<HaltonPointSampler> halton_;
  std::vector<double> point_;
  const SearchSpace* space_;
};

}  // namespace slurmtune::core
