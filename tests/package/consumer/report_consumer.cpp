// A trial built outside slurmtune's tree (CMake package or pkg-config): reports a
// decreasing loss until the study says stop.
#include <iostream>
#include <slurmtune/client.hpp>
#include <slurmtune/version.hpp>

int main() {
  auto client = slurmtune::Client::from_environment();
  const double x = client.param<double>("x");
  for (int step = 1; step <= 9; ++step)
    if (client.report(step, {{"loss", (x - 0.5) * (x - 0.5) + 1.0 / step}}) !=
        slurmtune::Decision::Continue)
      break;
  std::cout << "report_consumer built against slurmtune " << slurmtune::kVersion << '\n';
  return 0;
}
