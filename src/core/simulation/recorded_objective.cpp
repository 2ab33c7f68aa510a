#include "core/simulation/recorded_objective.hpp"

#include <limits>

#include "core/random.hpp"

namespace slurmtune::core {
namespace {
constexpr std::uint64_t kPickStream = 0x7069636bULL;        // "pick"
constexpr std::uint64_t kRepeatStream = 0x726570656174ULL;  // "repeat"
}  // namespace

RecordedObjective::RecordedObjective(const CurveTable& table, const StudySpec& study, bool reuse,
                                     bool nearest_random)
    : table_(&table),
      kind_(study.sampler.kind),
      seed_(study.seed),
      reuse_(reuse),
      nearest_random_(nearest_random && study.sampler.kind == SamplerKind::Random),
      space_(&study.space) {
  const std::size_t n = table.configurations().size();
  if (kind_ == SamplerKind::Random && !nearest_random_) {
    remaining_.resize(n);
    for (std::size_t c = 0; c < n; ++c)
      remaining_[c] = c;
  }
  if (kind_ == SamplerKind::Halton || is_model_based(kind_) || nearest_random_) {
    const auto& params = study.space.parameters();
    for (const auto& p : params)
      dims_ += p.domain.is_sampled() ? 1 : 0;
    used_.assign(n, false);
    units_.reserve(n * dims_);
    for (const auto& config : table.configurations())
      for (std::size_t j = 0; j < params.size(); ++j)
        if (params[j].domain.is_sampled())
          units_.push_back(params[j].domain.to_unit(config.values[j]));
    if (kind_ == SamplerKind::Halton)
      halton_ = std::make_unique<HaltonPointSampler>(dims_, study.seed);
    point_.resize(dims_);
  }
}

std::uint64_t RecordedObjective::capacity() const {
  return reuse_ ? std::numeric_limits<std::uint64_t>::max() : table_->configurations().size();
}

std::optional<CurveId> RecordedObjective::draw(TrialId trial, const Suggestion& suggestion) {
  if (!reuse_ && trial >= table_->configurations().size()) return std::nullopt;
  return curve_of(pick(trial, suggestion));
}

std::size_t RecordedObjective::pick(TrialId trial, const Suggestion& suggestion) {
  const std::size_t n = table_->configurations().size();
  switch (kind_) {
    case SamplerKind::Grid:
      return static_cast<std::size_t>(trial % n);
    case SamplerKind::Halton:
      halton_->point(trial, point_);
      return nearest_unused();
    case SamplerKind::Tpe:
    case SamplerKind::Bohb:
    case SamplerKind::Mobster:
    case SamplerKind::Nsga2:
      return nearest_to(suggestion);
    case SamplerKind::Random:
      if (nearest_random_) return nearest_to(suggestion);
      break;
  }
  Xoshiro256 rng(derive_seed(seed_, kPickStream, trial));
  if (reuse_) return static_cast<std::size_t>(rng.below(n));
  // Partial Fisher-Yates: the drawn configuration leaves the pool.
  const auto k = static_cast<std::size_t>(rng.below(remaining_.size()));
  const std::size_t config = remaining_[k];
  remaining_[k] = remaining_.back();
  remaining_.pop_back();
  return config;
}

std::size_t RecordedObjective::nearest_to(const Suggestion& suggestion) {
  const auto& params = space_->parameters();
  std::size_t d = 0;
  for (std::size_t j = 0; j < params.size(); ++j)
    if (params[j].domain.is_sampled())
      point_[d++] = params[j].domain.to_unit(suggestion.config.values[j]);
  return nearest_unused();
}

std::size_t RecordedObjective::nearest_unused() {
  std::size_t best = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (std::size_t c = 0; c < used_.size(); ++c) {
    if (used_[c] && !reuse_) continue;
    double d2 = 0;
    for (std::size_t d = 0; d < dims_; ++d) {
      const double delta = units_[c * dims_ + d] - point_[d];
      d2 += delta * delta;
    }
    if (d2 < best_distance) {
      best_distance = d2;
      best = c;
    }
  }
  used_[best] = true;
  return best;
}

CurveId RecordedObjective::curve_of(std::size_t config) const {
  const std::uint32_t runs = table_->repeats(config);
  if (runs == 1) return table_->first_curve(config);
  return table_->first_curve(config) +
         Xoshiro256(derive_seed(seed_, kRepeatStream, config)).below(runs);
}

}  // namespace slurmtune::core
