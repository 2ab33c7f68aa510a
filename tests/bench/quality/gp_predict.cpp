// Fits slurmtune's GP on rows read from stdin as MOBSTER fits it (standardised targets,
// its default number of iRprop- steps, from the priors' medians: MOBSTER's later refits
// start from its previous fit instead) and prints the posterior at other rows: the probe
// behind tests/bench/quality/model_predictiveness.py.
//   stdin:  "DIMS N M [fixed|dimension-scaled|sparse]", then N lines "x_1 .. x_DIMS y",
//           then M lines "x_1 .. x_DIMS"
//   stdout: M lines "mean sd" of the latent function, in the targets' units
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/search/gp/gaussian_process.hpp"
#include "core/search/gp/target_transform.hpp"
#include "core/search/sampler_spec.hpp"

namespace gp = slurmtune::core::gp;

int main() {
  std::size_t dims = 0, n = 0, m = 0;
  std::string header;
  std::getline(std::cin, header);
  std::istringstream fields(header);
  std::string prior_name;
  if (!(fields >> dims >> n >> m) || dims == 0 || n < 2) {
    std::cerr
        << "gp_predict: the first line must be \"DIMS N M [fixed|dimension-scaled|sparse]\" with "
           "DIMS >= 1, N >= 2\n";
    return 2;
  }
  fields >> prior_name;
  if (!prior_name.empty() && prior_name != "fixed" && prior_name != "dimension-scaled" &&
      prior_name != "sparse") {
    std::cerr << "gp_predict: the length-scale prior \"" << prior_name
              << "\" is not one of fixed (the default), dimension-scaled, sparse\n";
    return 2;
  }
  const gp::LengthScalePrior prior = prior_name == "dimension-scaled"
                                         ? gp::LengthScalePrior::DimensionScaled
                                     : prior_name == "sparse" ? gp::LengthScalePrior::Sparse
                                                              : gp::LengthScalePrior::Fixed;
  gp::Data data;
  data.dims = dims;
  data.inputs.resize(n * dims);
  std::vector<double> targets(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t d = 0; d < dims; ++d)
      std::cin >> data.inputs[i * dims + d];
    std::cin >> targets[i];
  }
  std::vector<double> points(m * dims);
  for (double& x : points)
    std::cin >> x;
  if (!std::cin) {
    std::cerr << "gp_predict: expected " << n << " rows of " << dims + 1 << " numbers and " << m
              << " rows of " << dims << "\n";
    return 2;
  }
  auto scaled = gp::scale_targets(gp::TargetTransform::Standardise, targets);
  data.targets = std::move(scaled.values);
  gp::FitOptions options;
  options.iterations = slurmtune::core::MobsterOptions{}.fit_iterations;
  options.length_prior = prior;
  const gp::Hyperparameters h = gp::fit(data, gp::default_hyperparameters(dims, prior), options);
  const gp::Posterior posterior(data, h);
  // Standardised: a difference of one in the model's units is one spread of the targets.
  const double spread = scaled.scale.target_units(1.0) - scaled.scale.target_units(0.0);
  for (const gp::Prediction& p : posterior.predict(points))
    std::cout << scaled.scale.target_units(p.mean) << " " << std::sqrt(p.variance) * spread << "\n";
  return 0;
}
