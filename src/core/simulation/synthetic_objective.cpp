#include "core/simulation/synthetic_objective.hpp"

#include <cmath>
#include <limits>
#include <numbers>

#include "core/error.hpp"
#include "core/random.hpp"

namespace slurmtune::core {
namespace {
constexpr std::uint64_t kOptimumStream = 0x6f7074696d756dULL;  // "optimum"
constexpr std::uint64_t kNoiseStream = 0x6e6f697365ULL;        // "noise"
constexpr CurveId kContinued = CurveId{1} << 62;               // PBT continuations
}  // namespace

SyntheticObjective::SyntheticObjective(const StudySpec& study)
    : space_(study.space),
      capacity_(std::numeric_limits<std::uint64_t>::max()),
      rastrigin_(study.simulate.objective == "rastrigin"),
      schedule_(study.simulate.objective == "schedule"),
      noise_(study.simulate.noise),
      step_time_s_(study.simulate.step_time_s),
      mode_(study.mode),
      seed_(study.seed) {
  enqueued_ = study.sampler.enqueued.size();
  const auto& spec = study.simulate;
  if (!is_model_based(study.sampler.kind)) {
    blind_.emplace(study.space, study.sampler.kind, study.seed);
    if (study.sampler.kind == SamplerKind::Grid) capacity_ = blind_->grid_size();
  }
  const SearchSpace& space = space_;
  if (spec.objective != "bowl" && spec.objective != "rastrigin" && spec.objective != "schedule")
    throw InputError("simulate.objective \"" + spec.objective +
                     "\" is unknown; use \"bowl\", \"rastrigin\" or \"schedule\"");
  for (std::size_t j = 0; j < space.size(); ++j)
    optimum_.push_back(0.2 + 0.6 * Xoshiro256(derive_seed(seed_, kOptimumStream, j)).uniform01());
  for (std::size_t k = 1; k < study.objectives.size(); ++k) {
    auto& optimum = cost_optima_.emplace_back();
    for (std::size_t j = 0; j < space.size(); ++j)
      optimum.push_back(0.2 +
                        0.6 * Xoshiro256(derive_seed(seed_, kOptimumStream + k, j)).uniform01());
    cost_modes_.push_back(study.objectives[k].mode);
  }
}

SyntheticObjective::Curve SyntheticObjective::curve(const Configuration& config) const {
  const auto& params = space_.parameters();
  double sum = 0;
  std::vector<double> x(params.size());
  // schedule: the first parameter sets speed and floor; the others add a bowl.
  const std::size_t first_bowl = schedule_ ? 1 : 0;
  for (std::size_t j = 0; j < params.size(); ++j) {
    x[j] = params[j].domain.to_unit(config.values[j]);
    if (j < first_bowl) continue;
    const double d = x[j] - optimum_[j];
    sum += 4 * d * d;
    if (rastrigin_) sum += (1 - std::cos(6 * std::numbers::pi * d)) / 4;
  }
  const double bowl_dims =
      static_cast<double>(std::max<std::size_t>(params.size() - first_bowl, 1));
  const double first = x.empty() ? 0.5 : x.front();
  const double last = x.empty() ? 0.5 : x.back();
  const double step_time = step_time_s_ * (0.5 + last);
  if (schedule_) {
    const double scale = std::pow(10.0, -2.0 * (1.0 - first));
    return Curve{0.02 + 0.5 * scale + sum / bowl_dims, 0.3 * scale, step_time, 2.5, 0, 0};
  }
  return Curve{0.05 + sum / bowl_dims, 0.3 + 1.2 * first, step_time, 2.5, 0, 0};
}

double SyntheticObjective::loss(const Curve& c, double step) const {
  if (schedule_) return c.floor + (c.start - c.floor) * std::pow(1.0 - c.alpha, step - c.origin);
  return c.floor + (c.start - c.floor) * std::pow(1.0 + c.progress + step - c.origin, -c.alpha);
}

double SyntheticObjective::value(const Curve& c, TrialId trial, double step) const {
  double loss = SyntheticObjective::loss(c, step);
  if (noise_ > 0) {
    // Box-Muller from two draws of a generator seeded by (seed, trial, step).
    Xoshiro256 rng(derive_seed(seed_ ^ kNoiseStream, trial, static_cast<std::uint64_t>(step)));
    const double u1 = 1.0 - rng.uniform01();
    const double u2 = rng.uniform01();
    loss += noise_ * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }
  return mode_ == Mode::Max ? 1.0 - loss : loss;
}

}  // namespace slurmtune::core

namespace slurmtune::core {

std::optional<CurveId> SyntheticObjective::draw(TrialId trial, const Suggestion& suggestion) {
  if (trial >= capacity()) return std::nullopt;
  if (curves_.size() <= trial) curves_.resize(trial + 1);
  curves_[trial] = curve(suggestion.config);
  if (!blind_ || trial < enqueued_) {  // a blind sampler's other draws are drawn again
    if (configs_.size() <= trial) configs_.resize(trial + 1);
    configs_[trial] = suggestion.config;
  }
  return trial;
}

const SyntheticObjective::Curve& SyntheticObjective::curve_of(CurveId id) const {
  return id >= kContinued ? continued_.at(id - kContinued) : curves_.at(id);
}

Configuration SyntheticObjective::configuration(CurveId curve) const {
  if (curve >= kContinued) return continued_configs_.at(curve - kContinued);
  // Blind configurations are drawn again rather than kept: a million-trial simulation
  // need not hold a million configurations.
  // An enqueued trial's configuration holds the entry's values, which a new draw lacks.
  return blind_ && curve >= enqueued_ ? blind_->sample(curve) : configs_.at(curve);
}

std::optional<CurveId> SyntheticObjective::continue_from(CurveId from, std::uint32_t index,
                                                         TrialId /*trial*/,
                                                         const Configuration& config) {
  const double origin = index + 1.0;  // the step of report `index`
  const double inherited = loss(curve_of(from), origin);
  Curve c = curve(config);
  c.origin = origin;
  if (!schedule_ && inherited > c.floor) {
    // Where the new curve reaches the inherited loss: (1 + p)^-alpha = (L0 - f) / (2.5 - f).
    c.progress = std::pow((inherited - c.floor) / (c.start - c.floor), -1.0 / c.alpha) - 1.0;
  } else {
    // Geometric steps: the same law from any starting loss; and a loss at or below the
    // floor can only start there.
    c.start = inherited;
  }
  continued_.push_back(c);
  continued_configs_.push_back(config);
  return kContinued + (continued_.size() - 1);
}

std::optional<CurvePoint> SyntheticObjective::report(CurveId curve, TrialId trial,
                                                     std::uint32_t index) const {
  const Curve& c = curve_of(curve);
  const double step = index + 1.0;
  CurvePoint point{step, value(c, trial, step), c.step_time_s, {}};
  if (cost_optima_.empty()) return point;
  // The other objectives: costs of the configuration, with their own noise.
  const Configuration config = configuration(curve);
  const auto& params = space_.parameters();
  for (std::size_t k = 0; k < cost_optima_.size(); ++k) {
    double sum = 0;
    for (std::size_t j = 0; j < params.size(); ++j) {
      const double d = params[j].domain.to_unit(config.values[j]) - cost_optima_[k][j];
      sum += 4 * d * d;
    }
    double cost = 0.05 + sum / static_cast<double>(std::max<std::size_t>(params.size(), 1));
    if (noise_ > 0) {
      Xoshiro256 rng(
          derive_seed(seed_ ^ (kNoiseStream + k + 1), trial, static_cast<std::uint64_t>(step)));
      const double u1 = 1.0 - rng.uniform01();
      const double u2 = rng.uniform01();
      cost += noise_ * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
    }
    point.others.push_back(cost_modes_[k] == Mode::Max ? 1.0 - cost : cost);
  }
  return point;
}

std::uint64_t SyntheticObjective::capacity() const {
  return capacity_;
}

}  // namespace slurmtune::core
