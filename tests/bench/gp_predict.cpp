// Fits slurmtune's GP (gp::fit, as MOBSTER does: default start, 40 iRprop- steps) on
// rows read from stdin and prints its mean at other rows: the probe behind
// tests/bench/model_predictiveness.py, which compares it with other models.
//   stdin: "DIMS N M [dimension-scaled]", then N lines "x_1 .. x_DIMS y", then M lines "x_1 ..
//   x_DIMS" stdout: M lines "mean sd" (the latent function's), in the targets' units
#include <cmath>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "core/search/gp/gaussian_process.hpp"

namespace gp = slurmtune::core::gp;

int main() {
  std::size_t dims = 0, n = 0, m = 0;
  std::string header;
  std::getline(std::cin, header);
  std::istringstream fields(header);
  std::string prior_name;
  if (!(fields >> dims >> n >> m) || dims == 0 || n < 2) {
    std::cerr << "gp_predict: the first line must be \"DIMS N M [dimension-scaled]\" with DIMS >= "
                 "1, N >= 2\n";
    return 2;
  }
  fields >> prior_name;
  const gp::LengthScalePrior prior = prior_name == "dimension-scaled"
                                         ? gp::LengthScalePrior::DimensionScaled
                                         : gp::LengthScalePrior::Fixed;
  gp::Data data;
  data.dims = dims;
  data.inputs.resize(n * dims);
  data.targets.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t d = 0; d < dims; ++d)
      std::cin >> data.inputs[i * dims + d];
    std::cin >> data.targets[i];
  }
  std::vector<double> points(m * dims);
  for (double& x : points)
    std::cin >> x;
  if (!std::cin) {
    std::cerr << "gp_predict: expected " << n << " rows of " << dims + 1 << " numbers and " << m
              << " rows of " << dims << "\n";
    return 2;
  }
  // Standardised targets, as MOBSTER fits them.
  const double mean = std::accumulate(data.targets.begin(), data.targets.end(), 0.0) / n;
  double spread = 0;
  for (double& y : data.targets)
    spread += (y - mean) * (y - mean);
  spread = std::sqrt(std::max(spread / n, 1e-300));
  for (double& y : data.targets)
    y = (y - mean) / spread;
  gp::FitOptions options;
  options.length_prior = prior;
  const gp::Hyperparameters h = gp::fit(data, gp::default_hyperparameters(dims, prior), options);
  const gp::Posterior posterior(data, h);
  for (const gp::Prediction& p : posterior.predict(points))
    std::cout << p.mean * spread + mean << " " << std::sqrt(p.variance) * spread << "\n";
  return 0;
}
