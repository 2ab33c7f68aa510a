// Probe for check_gp.py: reads cases from stdin and prints what core::gp makes of each,
// so that the posterior, the log marginal likelihood and its gradient can be checked
// against an independent numpy computation.
//   in:  N DIMS M, then signal_variance, DIMS length scales, noise_variance,
//        N rows of DIMS inputs and a target, M rows of DIMS inputs (test points)
//   out: "lml <value>", "grad <DIMS+2 numbers>", then M lines "<mean> <variance>"
#include <cstdio>
#include <iostream>

#include "core/search/gp/gaussian_process.hpp"

int main() {
  namespace gp = slurmtune::core::gp;
  std::size_t n = 0, dims = 0, m = 0;
  while (std::cin >> n >> dims >> m) {
    gp::Hyperparameters h;
    h.length_scales.resize(dims);
    std::cin >> h.signal_variance;
    for (auto& l : h.length_scales)
      std::cin >> l;
    std::cin >> h.noise_variance;
    gp::Data data;
    data.dims = dims;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < dims; ++k) {
        double x = 0;
        std::cin >> x;
        data.inputs.push_back(x);
      }
      double y = 0;
      std::cin >> y;
      data.targets.push_back(y);
    }
    std::vector<double> points(m * dims);
    for (auto& x : points)
      std::cin >> x;
    const auto objective = gp::fit_objective(data, h);
    const gp::Posterior posterior(std::move(data), h);
    std::printf("lml %.17g\ngrad", posterior.log_marginal_likelihood());
    for (const double g : objective.gradient)
      std::printf(" %.17g", g);
    std::printf("\n");
    for (const auto& p : posterior.predict(points))
      std::printf("%.17g %.17g\n", p.mean, p.variance);
    std::fflush(stdout);
  }
  return 0;
}
