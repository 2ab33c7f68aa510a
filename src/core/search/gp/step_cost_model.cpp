#include "core/search/gp/step_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>

namespace slurmtune::core {
namespace {

constexpr double kLeastSeconds =
    1e-9;                             // a stretch of no measurable time (a cost of zero has no log)
constexpr std::size_t kFirstFit = 2;  // the ladder's first point
constexpr std::size_t kMostFitted = 64;  // measurements a kernel fit sees at most

// (mean, standard deviation) of `ys`, the deviation 1 when they are all alike.
std::pair<double, double> moments(const std::vector<double>& ys) {
  double sum = 0, sum2 = 0;
  for (const double y : ys) {
    sum += y;
    sum2 += y * y;
  }
  const auto n = static_cast<double>(ys.size());
  const double mean = sum / n;
  const double var = std::max(sum2 / n - mean * mean, 0.0);
  return {mean, var > 1e-12 ? std::sqrt(var) : 1.0};
}

std::vector<double> standardised(const std::vector<double>& ys) {
  const auto [mean, sd] = moments(ys);
  std::vector<double> out;
  for (const double y : ys)
    out.push_back((y - mean) / sd);
  return out;
}

std::size_t ladder_point(std::size_t n, double growth) {
  return gp::refit_point(n, growth, kFirstFit);
}

}  // namespace

StepCostModel::StepCostModel(std::size_t dims, std::size_t max_observations, double refit_growth,
                             int fit_iterations)
    : dims_(dims),
      max_observations_(max_observations),
      refit_growth_(refit_growth),
      fit_iterations_(fit_iterations) {
  find_ladder_points();
}

StepCostModel::Timing& StepCostModel::timing(TrialId trial) {
  if (trial >= trials_.size()) trials_.resize(trial + 1);
  return trials_[trial];
}

void StepCostModel::configured(TrialId trial, std::vector<double> features) {
  timing(trial).features = std::move(features);
}

void StepCostModel::began_at(TrialId trial, double step, double time_s) {
  if (std::isfinite(step) && std::isfinite(time_s)) timing(trial).open = {{step, time_s}};
}

void StepCostModel::reported_at(TrialId trial, double step, double time_s) {
  Timing& t = timing(trial);
  if (!t.open || !std::isfinite(time_s)) return;
  const auto [from_step, from_time] = *t.open;
  if (!(step > from_step) || !(time_s >= from_time)) return;
  if (!std::isfinite(t.seconds + (time_s - from_time))) return;  // absurd times: not a cost
  t.seconds += time_s - from_time;
  t.resource += step - from_step;
  t.open = {{step, time_s}};
  if (t.features.empty()) return;  // a trial the sampler never saw start
  if (!t.measured) {
    t.measured = true;
    order_.push_back(trial);
  }
  keep({measurements_++, trial, std::log(*measured(trial))});
}

void StepCostModel::keep(Measurement measurement) {
  // A fit at ladder point P sees the measurements [P - kMostFitted, P). This one is seen
  // by a later fit only if it lies that close to the first point after it; the kept ones
  // before the current point's window are seen by none.
  const std::size_t i = measurement.index;
  const std::size_t after = i < kFirstFit ? kFirstFit : next_point_;
  if (i + kMostFitted >= after) kept_.push_back(measurement);
  if (measurements_ < next_point_) return;
  point_ = next_point_;
  next_point_ = gp::next_refit_point(point_, refit_growth_);
  while (!kept_.empty() && kept_.front().index + kMostFitted < point_)
    kept_.pop_front();
}

void StepCostModel::find_ladder_points() {
  point_ = ladder_point(measurements_, refit_growth_);
  next_point_ = gp::next_refit_point(point_, refit_growth_);
}

void StepCostModel::session_began() {
  for (auto& t : trials_)
    t.open.reset();
}

std::optional<double> StepCostModel::measured(TrialId trial) const {
  if (trial >= trials_.size() || !(trials_[trial].resource > 0)) return std::nullopt;
  return std::max(trials_[trial].seconds / trials_[trial].resource, kLeastSeconds);
}

std::optional<std::vector<double>> StepCostModel::predicted(std::span<const double> points) {
  if (order_.size() < kFirstFit) return std::nullopt;
  if (!posterior_ || posterior_->first != measurements_) {
    // The latest measured trials, in order of first measurement.
    const std::size_t first =
        order_.size() > max_observations_ ? order_.size() - max_observations_ : 0;
    gp::Data data;
    data.dims = dims_;
    std::vector<double> logs;
    for (std::size_t k = first; k < order_.size(); ++k) {
      const Timing& t = trials_[order_[k]];
      data.inputs.insert(data.inputs.end(), t.features.begin(), t.features.end());
      logs.push_back(std::log(*measured(order_[k])));
    }
    std::tie(shift_, scale_) = moments(logs);
    data.targets = standardised(logs);
    const std::size_t point = point_;
    auto fit = fits_.find(point);
    if (fit == fits_.end()) {
      // The latest kMostFitted of the first `point` measurements, standardised alone.
      gp::Data head;
      head.dims = dims_;
      std::vector<double> ys;
      const std::size_t from = point > kMostFitted ? point - kMostFitted : 0;
      for (const Measurement& m : kept_) {
        if (m.index < from || m.index >= point) continue;
        const auto& features = trials_[m.trial].features;
        head.inputs.insert(head.inputs.end(), features.begin(), features.end());
        ys.push_back(m.log_cost);
      }
      if (ys.size() != point - from)
        throw std::logic_error("StepCostModel: the measurements of ladder point " +
                               std::to_string(point) + " were not kept");
      head.targets = standardised(ys);
      fit = fits_
                .emplace(point, gp::fit(head, gp::default_hyperparameters(dims_),
                                        {fit_iterations_, gp::LengthScalePrior::Fixed, {}, {}}))
                .first;
    }
    posterior_.emplace(measurements_, gp::Posterior(std::move(data), fit->second));
  }
  std::vector<double> out;
  for (const auto& p : posterior_->second.predict(points))
    out.push_back(std::max(std::exp(p.mean * scale_ + shift_), kLeastSeconds));
  return out;
}

}  // namespace slurmtune::core
