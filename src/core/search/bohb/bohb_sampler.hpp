#pragma once
// BOHB's configuration generator (Falkner, Klein & Hutter 2018, as HpBandSter implements
// it and Ray Tune's TuneBOHB wraps it): observations are kept per budget (a rung's
// resource, or max_t for completed trials); a new configuration is drawn at random with
// probability random_fraction, or while no budget has enough observations; otherwise
// from the highest budget that does: product kernel densities l(x) over the best
// top_n_percent and g(x) over the rest, num_samples candidates drawn around good points
// with bandwidths widened by bandwidth_factor, and the candidate with the smallest
// g(x)/l(x) wins. Deterministic given the seed and the order of observations.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/search/model_options.hpp"
#include "core/search/optuna/numpy_compat.hpp"

namespace slurmtune::core::bohb {

/// A dimension of BOHB's vector space: continuous in [0, 1] (levels == 0; numeric
/// parameters in their unit coordinate, logged where the domain is log) or categorical
/// with `levels` values (indices).
struct Dimension {
  std::size_t levels = 0;
};

struct Draw {
  std::vector<double> vector;
  bool from_model = false;
};

class BohbSampler {
 public:
  BohbSampler(std::vector<Dimension> dimensions, const BohbOptions& options, std::uint32_t seed);

  /// A configuration's `loss` (smaller is better; +inf for a diverged report) at
  /// `budget`.
  void observe(double budget, const std::vector<double>& vector, double loss);
  Draw draw();

  /// The budget the model would be fitted on now, if any.
  std::optional<double> model_budget() const;
  std::uint64_t words_drawn() const { return rng_.words_drawn(); }
  void restore(std::uint64_t words);

  template <class Archive>
  void serialize(Archive& archive) {
    archive(rng_, budgets_);
  }

 private:
  struct Observations {
    std::vector<double> vectors;  // row-major, one row per observation
    std::vector<double> losses;
    template <class Archive>
    void serialize(Archive& archive) {
      archive(vectors, losses);
    }
  };
  /// Product-kernel density over `rows` of `data` with one bandwidth per dimension.
  struct Density {
    std::vector<double> rows;  // row-major
    std::vector<double> bandwidths;
    std::vector<double> log_norm, log_same, log_other;  // per dimension, from bandwidths
    std::size_t n = 0;
  };
  std::size_t min_points() const;
  bool fits(const Observations& o) const;
  std::vector<double> random_vector();
  /// The rows `ids` of `o`, a conditional parameter's NaN (inactive) imputed as
  /// HpBandSter's impute_conditional_data means to: from a random row of the same set that
  /// has it, else a random value. (Its loop, `while np.any(nan_indices)`, stops early when
  /// the only missing dimension is the first, index 0 being falsy; here every one is filled.)
  std::vector<double> imputed_rows(const Observations& o, const std::vector<std::size_t>& ids);
  Density density(std::vector<double> rows) const;
  double log_pdf(const Density& d, const std::vector<double>& x) const;
  std::optional<std::vector<double>> model_draw(const Observations& o);

  std::vector<Dimension> dims_;
  BohbOptions options_;
  std::uint32_t seed_;
  NumpyRandomState rng_;
  std::map<double, Observations> budgets_;
};

}  // namespace slurmtune::core::bohb
