#include "core/search/bohb/bohb_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/error.hpp"
#include "core/search/optuna/truncated_normal.hpp"

namespace slurmtune::core::bohb {
namespace {

// HpBandSter compares max(1e-32, g(x)) / max(l(x), 1e-32); in logs here, so that
// densities of many dimensions do not underflow to the floor together.
const double kLogFloor = std::log(1e-32);

struct GoodBad {
  std::size_t good = 0, bad = 0;
};

// HpBandSter's split sizes: the good set is the best top_n_percent (at least
// min_points), the bad set the next (100 - top_n_percent) percent (at least min_points).
GoodBad split_sizes(std::size_t n, std::size_t min_points, double top_n_percent) {
  const auto share = [n](double percent) {
    return static_cast<std::size_t>(std::floor(percent * static_cast<double>(n) / 100.0));
  };
  const std::size_t good = std::min(n, std::max(min_points, share(top_n_percent)));
  const std::size_t bad = std::min(n - good, std::max(min_points, share(100.0 - top_n_percent)));
  return {good, bad};
}

}  // namespace

BohbSampler::BohbSampler(std::vector<Dimension> dimensions, const BohbOptions& options,
                         std::uint32_t seed)
    : dims_(std::move(dimensions)), options_(options), seed_(seed), rng_(seed) {}

void BohbSampler::observe(double budget, const std::vector<double>& vector, double loss) {
  if (vector.size() != dims_.size())
    throw UsageError("bohb: an observation has " + std::to_string(vector.size()) +
                     " coordinates, the space " + std::to_string(dims_.size()));
  auto& o = budgets_[budget];
  o.vectors.insert(o.vectors.end(), vector.begin(), vector.end());
  o.losses.push_back(std::isnan(loss) ? std::numeric_limits<double>::infinity() : loss);
}

void BohbSampler::restore(std::uint64_t words) {
  rng_ = NumpyRandomState(seed_);
  rng_.discard(words);
}

std::size_t BohbSampler::min_points() const {
  return options_.min_points_in_model.value_or(dims_.size() + 1);
}

bool BohbSampler::fits(const Observations& o) const {
  // Both kernel densities need more points than dimensions (HpBandSter's rule).
  const std::size_t n = o.losses.size();
  if (n < min_points() || dims_.empty()) return false;
  const auto sizes = split_sizes(n, min_points(), options_.top_n_percent);
  return sizes.good > dims_.size() && sizes.bad > dims_.size();
}

std::optional<double> BohbSampler::model_budget() const {
  for (auto it = budgets_.rbegin(); it != budgets_.rend(); ++it)
    if (fits(it->second)) return it->first;
  return std::nullopt;
}

Draw BohbSampler::draw() {
  const auto budget = model_budget();
  if (!budget || rng_.random_sample() < options_.random_fraction) return {random_vector(), false};
  if (auto vector = model_draw(budgets_.at(*budget))) return {std::move(*vector), true};
  return {random_vector(), false};
}

std::vector<double> BohbSampler::random_vector() {
  std::vector<double> x;
  for (const auto& d : dims_)
    x.push_back(d.levels == 0
                    ? rng_.random_sample()
                    : static_cast<double>(rng_.randint(0, static_cast<std::int64_t>(d.levels))));
  return x;
}

std::vector<double> BohbSampler::imputed_rows(const Observations& o,
                                              const std::vector<std::size_t>& ids) {
  const std::size_t k = dims_.size();
  std::vector<double> rows;
  for (const auto i : ids)
    rows.insert(rows.end(), o.vectors.begin() + static_cast<std::ptrdiff_t>(i * k),
                o.vectors.begin() + static_cast<std::ptrdiff_t>((i + 1) * k));
  const std::size_t n = ids.size();
  const auto missing = [&](const std::vector<double>& row) {
    for (std::size_t j = 0; j < k; ++j)
      if (std::isnan(row[j])) return j;
    return k;
  };
  std::vector<double> out = rows;
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<double> datum(rows.begin() + static_cast<std::ptrdiff_t>(r * k),
                              rows.begin() + static_cast<std::ptrdiff_t>((r + 1) * k));
    for (std::size_t j = missing(datum); j < k; j = missing(datum)) {
      std::vector<std::size_t> having;  // rows of the set (as given) that have dimension j
      for (std::size_t other = 0; other < n; ++other)
        if (!std::isnan(rows[other * k + j])) having.push_back(other);
      if (having.empty()) {  // no row has it: a random value of its kind
        datum[j] =
            dims_[j].levels == 0
                ? rng_.random_sample()
                : static_cast<double>(rng_.randint(0, static_cast<std::int64_t>(dims_[j].levels)));
        continue;
      }
      // One such row, at random, fills every missing dimension it has.
      const std::size_t from = having[static_cast<std::size_t>(
          rng_.randint(0, static_cast<std::int64_t>(having.size())))];
      for (std::size_t m = 0; m < k; ++m)
        if (std::isnan(datum[m])) datum[m] = rows[from * k + m];
    }
    std::copy(datum.begin(), datum.end(), out.begin() + static_cast<std::ptrdiff_t>(r * k));
  }
  return out;
}

BohbSampler::Density BohbSampler::density(std::vector<double> rows) const {
  const std::size_t k = dims_.size();
  Density d;
  d.n = k == 0 ? 0 : rows.size() / k;
  d.rows = std::move(rows);
  // statsmodels' normal_reference rule, 1.06 sd n^(-1/(4+k)), for every column (as
  // KDEMultivariate applies it), floored at min_bandwidth. A categorical bandwidth is
  // the Aitchison-Aitken probability of leaving the observed level: capped at
  // (levels-1)/levels, where every level is equally likely.
  const double scale =
      1.06 * std::pow(static_cast<double>(d.n), -1.0 / (4.0 + static_cast<double>(k)));
  for (std::size_t j = 0; j < k; ++j) {
    double mean = 0;
    for (std::size_t r = 0; r < d.n; ++r)
      mean += d.rows[r * k + j];
    mean /= static_cast<double>(d.n);
    double var = 0;
    for (std::size_t r = 0; r < d.n; ++r)
      var += (d.rows[r * k + j] - mean) * (d.rows[r * k + j] - mean);
    double bw = std::max(options_.min_bandwidth, scale * std::sqrt(var / static_cast<double>(d.n)));
    if (dims_[j].levels > 1)
      bw = std::min(
          bw, static_cast<double>(dims_[j].levels - 1) / static_cast<double>(dims_[j].levels));
    d.bandwidths.push_back(bw);
  }
  // Each kernel's log normaliser (Gaussian) and log probabilities (Aitchison-Aitken):
  // per density, not per candidate scored against it.
  const double log_sqrt_2pi = 0.5 * std::log(2 * std::numbers::pi);
  d.log_norm.assign(k, 0.0);
  d.log_same.assign(k, 0.0);
  d.log_other.assign(k, 0.0);
  for (std::size_t j = 0; j < k; ++j) {
    const double h = d.bandwidths[j];
    d.log_norm[j] = -std::log(h) - log_sqrt_2pi;
    if (dims_[j].levels > 1) {
      d.log_same[j] = std::log1p(-h);
      d.log_other[j] = std::log(h / static_cast<double>(dims_[j].levels - 1));
    }
  }
  return d;
}

double BohbSampler::log_pdf(const Density& d, const std::vector<double>& x) const {
  const std::size_t k = dims_.size();
  // log of the mean over rows of the product kernel, by log-sum-exp.
  std::vector<double> terms(d.n);
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < d.n; ++r) {
    double t = 0;
    for (std::size_t j = 0; j < k; ++j) {
      const double xi = d.rows[r * k + j];
      if (dims_[j].levels == 0) {
        const double z = (x[j] - xi) / d.bandwidths[j];
        t += d.log_norm[j] - 0.5 * z * z;
      } else if (dims_[j].levels > 1) {
        t += x[j] == xi ? d.log_same[j] : d.log_other[j];
      }
    }
    terms[r] = t;
    top = std::max(top, t);
  }
  if (!std::isfinite(top)) return top;
  double sum = 0;
  for (const double t : terms)
    sum += std::exp(t - top);
  return top + std::log(sum / static_cast<double>(d.n));
}

std::optional<std::vector<double>> BohbSampler::model_draw(const Observations& o) {
  const std::size_t k = dims_.size();
  const auto sizes = split_sizes(o.losses.size(), min_points(), options_.top_n_percent);
  const auto order = numpy_argsort(o.losses);
  const std::vector<std::size_t> good(order.begin(),
                                      order.begin() + static_cast<std::ptrdiff_t>(sizes.good));
  const std::vector<std::size_t> bad(
      order.begin() + static_cast<std::ptrdiff_t>(sizes.good),
      order.begin() + static_cast<std::ptrdiff_t>(sizes.good + sizes.bad));
  const Density l = density(imputed_rows(o, good));
  const Density g = density(imputed_rows(o, bad));
  std::optional<std::vector<double>> best;
  double best_score = std::numeric_limits<double>::infinity();
  std::vector<double> x(k);
  for (std::size_t s = 0; s < options_.num_samples; ++s) {
    const auto row = static_cast<std::size_t>(rng_.randint(0, static_cast<std::int64_t>(l.n)));
    for (std::size_t j = 0; j < k; ++j) {
      const double m = l.rows[row * k + j];
      const double bw = l.bandwidths[j];
      if (dims_[j].levels == 0) {
        const double wide = bw * options_.bandwidth_factor;
        x[j] = std::clamp(
            tpe::from_quantile(rng_.random_sample(), -m / wide, (1 - m) / wide, m, wide), 0.0, 1.0);
      } else {
        x[j] =
            rng_.random_sample() < 1 - bw
                ? m
                : static_cast<double>(rng_.randint(0, static_cast<std::int64_t>(dims_[j].levels)));
      }
    }
    const double score = std::max(log_pdf(g, x), kLogFloor) - std::max(log_pdf(l, x), kLogFloor);
    if (score < best_score) {
      best_score = score;
      best = x;
    }
  }
  return best;
}

}  // namespace slurmtune::core::bohb
